"""``agent-runtime serve``: the webhooks and the worker on one local port, and the playground's page."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, NoReturn

from ..config import RuntimeConfig, check_base_url
from ..errors import ConfigError
from .common import Commands

if TYPE_CHECKING:
    from ..service.serve import LocalServer

LOOPBACK = ("127.0.0.1", "localhost", "::1")
STOPPING_SECONDS = 1.5  # what serve's close may take after Ctrl-C: then the process ends regardless


def add(commands: Commands) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the Slack/JIRA/runs webhooks locally, with the worker in-process, and the playground's page",
        description="Serve /slack/events, /slack/interactivity, /jira/webhook, /hooks/<workflow> and /runs on "
        "HOST:PORT with the worker "
        "in-process on the local store (AGENT_STATE_DIR). Secrets come from SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, "
        "JIRA_WEBHOOK_SECRET, JIRA_SHARED_SECRET, JIRA_BASE_URL/JIRA_EMAIL/JIRA_API_TOKEN and API_KEY. Unless "
        "SLACK_BOT_TOKEN is set, http://HOST:PORT/ is the playground: a Slack workspace and a JIRA site for the "
        "workflows in a browser, answered by the Web APIs serve stands in for (docs/playground.md).",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    serve.add_argument("--port", type=_port, default=8080, help="1-65535 (0: any free port); default: 8080")
    serve.add_argument(
        "--playground",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the page at / and the Slack and JIRA APIs it answers for (default: on unless SLACK_BOT_TOKEN is set; "
        "loopback hosts only)",
    )
    serve.set_defaults(handler=_cmd_serve)


def _port(text: str) -> int:
    """A TCP port: refused by argparse (usage, exit 2) outside 0-65535, where binding would raise instead."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"{port} is not a port (1-65535, or 0 for any free port)")
    return port


def _cmd_serve(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..service.serve import LocalServer
    from ..triggers.config import TriggerConfig

    playground = args.playground if args.playground is not None else not os.environ.get("SLACK_BOT_TOKEN")
    if playground and args.host not in LOOPBACK:
        if args.playground:
            raise ConfigError(f"--playground: the page is loopback only (--host 127.0.0.1), not {args.host}")
        playground = False
    check_base_url(os.environ)  # as `run` does: said once at the start, not as every mention's failed run
    config.usable_state_dir(create=True)  # its queue, threads and records: said before the port is taken
    server = LocalServer(config, TriggerConfig.from_env(), host=args.host, port=args.port, playground=playground)
    server.start()
    for warning in _lacking(server):
        print(f"agent-runtime: warning: {warning}", file=sys.stderr)
    if playground:
        print(f"agent-runtime: the playground: open {server.url}/ in a browser", file=sys.stderr)
    routes = "/slack/events, /slack/interactivity, /jira/webhook, /hooks/<workflow> and /runs"
    print(f"agent-runtime: serving {server.url}{routes} (Ctrl-C stops)", file=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        _until_interrupted()
    print("agent-runtime: stopping (a run under way resumes at the next start; Ctrl-C again quits)", file=sys.stderr)
    _exit_after(server.close, STOPPING_SECONDS)


def _lacking(server: LocalServer) -> list[str]:
    """What `workflows validate` warns of for the workflows serve runs, against the secrets serve runs with (the
    playground's, where it stands in): a Slack event taken whose answer goes nowhere, a signed webhook refused."""
    from ..workflows.credentials import missing_credentials

    triggers, said = server.triggers, []
    for workflow in server.workflows:
        lacking = missing_credentials(
            workflow,
            triggers.secret,
            jira_site=bool(triggers.jira_base_url and triggers.jira_email),
            api_url=server.runtime.api_url,
            stack=bool(triggers.secrets_name),
        )
        said += [f"{workflow.path}: {key}: {why}" for key, why in lacking]
    return said


def _until_interrupted() -> None:
    """Waits for Ctrl-C in short waits: Python runs the signal's handler (KeyboardInterrupt) only when the main
    thread runs again, and a SIGINT the kernel hands to another of serve's threads wakes no untimed wait (serve
    then sat in it, deaf to Ctrl-C, until killed)."""
    idle = threading.Event()
    while not idle.wait(0.2):
        pass


def _exit_after(close: Callable[[], None], seconds: float) -> NoReturn:
    """Closes serve and runs the exit hooks (MCP servers closed, logs flushed) within ``seconds``, then ends the
    process there and then: a run under way is not waited for (the store says interrupted; the next start resumes
    it). The interpreter's own exit would wait for what no deadline bounds: a tool call's thread pool (joined at
    exit), a lock a call holds, and its collection of the whole heap (one to three seconds on a busy machine).
    A second Ctrl-C ends it at once."""
    signal.signal(signal.SIGINT, lambda *_: os._exit(130))

    def closing() -> None:
        try:
            close()
        finally:
            atexit._run_exitfuncs()

    closer = threading.Thread(target=closing, name="serve-stopping", daemon=True)
    closer.start()
    closer.join(seconds)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed or broken terminal: nothing left to say on it
            stream.flush()
    os._exit(0)
