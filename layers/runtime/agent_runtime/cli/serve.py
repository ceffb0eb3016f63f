"""``agent-runtime serve``: the webhooks and the worker on one local port."""

from __future__ import annotations

import argparse
import sys
import threading

from ..config import RuntimeConfig
from .common import Commands


def add(commands: Commands) -> None:
    serve = commands.add_parser(
        "serve",
        help="serve the Slack/JIRA/runs webhooks locally, with the worker in-process",
        description="Serve /slack/events, /slack/interactivity, /jira/webhook, /hooks/<workflow> and /runs on "
        "HOST:PORT with the worker "
        "in-process on the local store (AGENT_STATE_DIR). Secrets come from SLACK_SIGNING_SECRET, SLACK_BOT_TOKEN, "
        "JIRA_WEBHOOK_SECRET, JIRA_SHARED_SECRET, JIRA_BASE_URL/JIRA_EMAIL/JIRA_API_TOKEN and API_KEY.",
    )
    serve.add_argument("--host", default="127.0.0.1", help="default: 127.0.0.1")
    serve.add_argument("--port", type=int, default=8080, help="default: 8080")
    serve.set_defaults(handler=_cmd_serve)


def _cmd_serve(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..service.serve import LocalServer
    from ..triggers.config import TriggerConfig

    server = LocalServer(config, TriggerConfig.from_env(), host=args.host, port=args.port).start()
    routes = "/slack/events, /slack/interactivity, /jira/webhook, /hooks/<workflow> and /runs"
    print(f"agent-runtime: serving {server.url}{routes} (Ctrl-C stops)", file=sys.stderr)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0
