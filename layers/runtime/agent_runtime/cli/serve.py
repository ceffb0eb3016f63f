"""``agent-runtime serve``: the webhooks and the worker on one local port, and the playground's page."""

from __future__ import annotations

import argparse
import os
import sys
import threading

from ..config import RuntimeConfig
from ..errors import ConfigError
from .common import Commands

LOOPBACK = ("127.0.0.1", "localhost", "::1")


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
    server = LocalServer(config, TriggerConfig.from_env(), host=args.host, port=args.port, playground=playground)
    server.start()
    if playground:
        print(f"agent-runtime: the playground: open {server.url}/ in a browser", file=sys.stderr)
    routes = "/slack/events, /slack/interactivity, /jira/webhook, /hooks/<workflow> and /runs"
    print(f"agent-runtime: serving {server.url}{routes} (Ctrl-C stops)", file=sys.stderr)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
