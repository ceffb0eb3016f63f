"""The worker's side of tools that act as the requester: a run's connections (who it acts for, by its trigger; the
store's tokens; who asks them), the private message that asks a person to connect, and a connection revoked
(``revoke``: "disconnect <provider>" written to the app, ``agent-runtime oauth revoke``).

A person is asked in Slack only, in their direct conversation with the app: the link there is theirs alone (whoever
follows it connects *their* account as that person). A person known only by another source (a JIRA account) cannot
be asked privately: their runs' tools refuse, saying so."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..chat.exceptions import ReplyError
from ..config import RuntimeConfig
from ..deployment import deployed
from ..identity import Asked, Connections, Need, ProviderClient
from ..identity.flow import ConnectFlow
from ..identity.vault import Keyring, KmsKeyring, LocalKeyring, Vault, key_file
from ..inbound import TriggerEvent
from ..stores.base import Store
from ..stores.items import ConnectAsk
from ..workflows import Workflow, load_workflow
from ..workflows.oauth import STATE_KEY

if TYPE_CHECKING:
    from .handlers import Delivery

KMS_KEY_ENV = "AGENT_KMS_KEY_ID"  # the stack's key that seals people's tokens (template.yaml)
STATE_KEY_FILE = "oauth-state.key"  # serve's own state key, where OAUTH_STATE_KEY is unset
ASKING = (
    "To go on, the *{workflow}* workflow needs to act as you on *{provider}* (for `{tool}`), and you have not "
    "connected it yet. <{link}|Connect your {provider} account> — the link is yours alone and works until "
    "{until}. Write `disconnect {provider}` to me any time to take it back."
)


class ChatAsker:
    """Asks a Slack user in their direct conversation with the app; keeps the ask where the callback finds it."""

    def __init__(self, flow: ConnectFlow, slack: Any, workflow: str, thread_id: str) -> None:
        self.flow, self.slack, self.workflow, self.thread_id = flow, slack, workflow, thread_id

    def ask(self, need: Need) -> Asked:
        kind, _, user = need.person.partition(":")
        if not self.flow.base_url:
            return Asked(refused="the stack's address is not known here (AGENT_API_URL), so no link can be sent")
        if kind != "slack":
            return Asked(refused=f"{need.person} can be asked to connect privately only in Slack")
        if self.slack is None:
            return Asked(refused="this stack has no Slack credentials to ask them privately")
        ask = ConnectAsk(need.person, need.provider, self.workflow, need.run_id, self.thread_id, need.expires_at)
        ask_id, link = self.flow.ask(ask)
        until = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(need.expires_at))
        text = ASKING.format(workflow=self.workflow, provider=need.provider, tool=need.tool, link=link, until=until)
        try:
            self.slack.direct(user, text)
        except ReplyError as error:
            return Asked(refused=f"the private message could not be sent ({error})")
        return Asked(ask=ask_id)

    def status(self, ask: str) -> str:
        return self.flow.status(ask)


def flow_from_env(
    store: Store,
    runtime: RuntimeConfig,
    secrets: Callable[[str], str | None],
    kms: Callable[[], Any] | None = None,
    *,
    local_state_key: bool = False,
) -> ConnectFlow:
    """People's connections as the environment sets them up: sealed by the stack's KMS key (``AGENT_KMS_KEY_ID``,
    with ``kms()`` its client) or, locally, by a key file in the state directory. ``local_state_key``: the links'
    ``state`` is signed, where no ``oauth_state_key`` is set, by a key file of the state directory (``serve``: the
    one process that both signs and checks it)."""
    if local_state_key:
        secrets = with_state_key(secrets, runtime.state_dir / STATE_KEY_FILE)
    key_id = os.environ.get(KMS_KEY_ENV)
    keyring: Keyring = (
        KmsKeyring(kms(), key_id) if key_id and kms is not None else LocalKeyring(runtime.state_dir / "oauth.key")
    )
    return ConnectFlow(
        store,
        Vault(store, keyring),
        workflow=lambda name: deployed(load_workflow(name, runtime.workflows_dir), runtime),
        secrets=secrets,
        base_url=runtime.api_url or "",
    )


def with_state_key(secrets: Callable[[str], str | None], path: Path) -> Callable[[str], str | None]:
    """``secrets``, with ``oauth_state_key`` read from the key file at ``path`` (made once) when they have none."""

    def read(name: str) -> str | None:
        found = secrets(name)
        return found if found or name != STATE_KEY else key_file(path).hex()

    return read


def connections_for(delivery: Delivery[Any], event: TriggerEvent, workflow: Workflow) -> Connections | None:
    """The run's connections, when its workflow declares providers (None: it has none to use)."""
    if not workflow.oauth:
        return None
    process, settings = delivery.process, workflow.oauth
    person, why = process.sources.of(event).acts_for(event, workflow)
    flow = process.connect
    asker = ChatAsker(flow, process.replies.slack, workflow.name, event.thread_id) if flow is not None else None
    return Connections(
        person,
        settings.providers,
        vault=flow.vault if flow is not None else None,
        asker=asker,
        secrets=process.secrets,
        why_not=why,
        timeout_hours=settings.connect_timeout_hours,
        clock=process.clock,
    )


def revoke(
    flow: ConnectFlow,
    person: str,
    provider: str,
    workflow: Callable[[str], Workflow],
    secrets: Callable[[str], str | None],
) -> str:
    """Revoke ``person``'s ``provider`` connection at the provider (when it has an endpoint for it) and forget it;
    what happened, in a line. Forgotten even when the provider cannot be reached: the stack holds no token after."""
    held = flow.vault.load(person, provider)
    if held is None:
        return f"You have no {provider} connection here: nothing to disconnect."
    said = ""
    try:
        settings = workflow(held.workflow).oauth.providers[provider]
        secret = secrets(settings.secret_name) if settings.secret_name else None
        client = ProviderClient(settings, secret)
        token, hint = held.tokens.refresh_token or held.tokens.access_token, "refresh_token"
        client.revoke(token, hint if held.tokens.refresh_token else "access_token")
        said = " and revoked at the provider" if settings.revoke_url else " (the provider has no revocation endpoint)"
    except Exception as error:  # forgotten all the same: unreachable, refused, the workflow changed
        said = f" (the provider could not be told: {type(error).__name__})"
    flow.vault.forget(person, provider)
    return f"Disconnected {provider}: the stack no longer holds your token{said}."
