"""``agent-runtime oauth revoke PROVIDER``: a person's connection to an OAuth provider revoked and forgotten (yours,
``local:<login>``, by default; an admin names anyone's with ``--user slack:U0123``); and, for ``agent-runtime run``,
the terminal's way of asking you to connect: a URL to open, then a wait until the stack's callback has your token.

Connecting goes through the stack's own authorisation route (``AGENT_API_URL``: a deployed stack, or ``serve``),
whose callback seals the token in the store this process reads too (``AGENT_TABLE`` and ``AGENT_BUCKET``, or the
same ``AGENT_STATE_DIR``)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from ..config import RuntimeConfig
from ..events import ActsFor
from ..hooks import Hook
from .common import Commands, login, store_here

if TYPE_CHECKING:
    from ..identity import Asked, Connections, Need
    from ..identity.flow import ConnectFlow
    from ..steps import Run
    from ..workflows import Workflow

POLL_SECONDS = 1.0  # one read of the ask's item a second while you connect
# Why a run here cannot ask you, and what to do: the connect link leads to a stack's routes on this store.
NO_ADDRESS = (
    "start `agent-runtime serve` on this state directory and set AGENT_API_URL to its address "
    "(http://127.0.0.1:8080) for this command, then run it again (docs/workflows.md#try-it-locally)"
)
NO_TERMINAL = "no terminal to show you the link at: run it once at a terminal (the connection is kept for the next)"


def add(commands: Commands) -> None:
    oauth = commands.add_parser(
        "oauth",
        help="people's connections to OAuth providers (tools acting as the requester)",
        description="The connections tools acting as the requester use (a workflow's oauth.providers).",
    )
    verbs = oauth.add_subparsers(dest="oauth_command", metavar="COMMAND", required=True)
    revoke = verbs.add_parser(
        "revoke",
        help="revoke a person's connection to a provider and forget it",
        description="Revoke a person's tokens for PROVIDER at the provider (when it has a revocation endpoint) "
        "and delete them from the store (AGENT_TABLE and AGENT_BUCKET, else the local state directory). "
        "Their next run that needs it asks them to connect again. Exits 0 when a connection was revoked, 1 "
        "when there was none.",
    )
    revoke.add_argument("provider", metavar="PROVIDER", help="the provider's name in the workflow's oauth.providers")
    revoke.add_argument(
        "--user",
        metavar="ID",
        help="whose: slack:<user id>, jira:<account id> or local:<login> (default: yours, local:<your login>)",
    )
    revoke.set_defaults(handler=run_revoke)


me = login  # you, as a person: ``local:<login>`` (one name for a CLI person: common.login)


class ActingForYou(Hook):
    """Records, as the run starts, that it is for you (``ActsFor``): a CLI run has no trigger event to say so."""

    def on_run_start(self, run: Run) -> None:
        if not run.record.events_of(ActsFor):
            run.record.event(ActsFor(who=me()))


def flow_here(config: RuntimeConfig) -> ConnectFlow:
    """People's connections in the store this process opens (as ``runs`` does), sealed as the environment says."""
    import boto3

    from ..service.connections import flow_from_env
    from ..triggers.config import TriggerConfig

    triggers = TriggerConfig.from_env()
    return flow_from_env(store_here(config), config, triggers.secret, lambda: boto3.client("kms"))


def run_revoke(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..service.connections import revoke
    from ..triggers.config import TriggerConfig
    from ..workflows import load_workflow

    flow = flow_here(config)
    who = args.user or me()
    held = flow.vault.load(who, args.provider)
    said = revoke(
        flow,
        who,
        args.provider,
        lambda name: load_workflow(name, config.workflows_dir),
        TriggerConfig.from_env().secret,
    )
    print(said.replace("You have", f"{who} has").replace("your token", f"{who}'s token"))
    return 0 if held is not None else 1


class TerminalAsker:
    """Asks you, at the terminal: the stack's link printed, then a wait (polling the store) until you connected,
    declined, or ``patience`` seconds passed. What keeps it from asking (no address to link to, no terminal) is
    said in one line on stderr too: what to start or set."""

    def __init__(
        self, flow: ConnectFlow, workflow: str, *, patience: float = 600.0, out: Any = None, terminal: bool = True
    ) -> None:
        self.flow, self.workflow, self.patience, self.out = flow, workflow, patience, out or sys.stderr
        self.terminal = terminal

    def ask(self, need: Need) -> Asked:
        from ..identity import Asked
        from ..stores.items import ConnectAsk

        said = f"agent-runtime: {need.tool} acts as you ({need.person}) on {need.provider}"
        if not (self.flow.base_url and self.terminal):
            why = NO_ADDRESS if not self.flow.base_url else NO_TERMINAL
            print(f"{said}, and you have not connected it: {why}", file=self.out)
            return Asked(refused=why)
        ask_id, link = self.flow.ask(
            ConnectAsk(need.person, need.provider, self.workflow, need.run_id, "", need.expires_at)
        )
        print(f"{said}: open {link} to connect", file=self.out)
        waited = 0.0
        while (status := self.flow.status(ask_id)) == "open" and waited < self.patience:
            time.sleep(POLL_SECONDS)
            waited += POLL_SECONDS
        if status == "connected":
            return Asked(connected=True)
        return Asked(refused="you declined" if status == "denied" else "you did not connect in time")

    def status(self, ask: str) -> str:
        return self.flow.status(ask)


def terminal_connections(workflow: Workflow, config: RuntimeConfig) -> Connections | None:
    """``agent-runtime run``'s connections: it acts for you (``local:<login>``), asked at the terminal."""
    from ..identity import Connections
    from ..triggers.config import TriggerConfig

    if not workflow.oauth:
        return None
    flow = flow_here(config)
    return Connections(
        me(),
        workflow.oauth.providers,
        vault=flow.vault,
        asker=TerminalAsker(flow, workflow.name, terminal=sys.stdin.isatty() or sys.stderr.isatty()),
        secrets=TriggerConfig.from_env().secret,
        timeout_hours=workflow.oauth.connect_timeout_hours,
    )
