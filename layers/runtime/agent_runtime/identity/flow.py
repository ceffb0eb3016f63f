"""The stack's side of connecting: a run's request that its person connect (``ask``: the link they are sent), the
link followed (``start``: a fresh attempt — PKCE verifier, once-only ``state`` — and the redirect to the provider),
and the provider's answer (``callback``: the ``state`` checked, used once, the code exchanged, the tokens sealed).

``state`` is ``<nonce>.<signature>``: 256 random bits naming the attempt's item, and an HMAC-SHA256 (the
integrations secret's ``oauth_state_key``) over the nonce, the ask, the person, the run and the provider. A forged
state names no attempt or fails its signature; a replayed one finds its attempt used; either is refused before the
code is looked at. The link itself opens the ask again until it is connected, declined or past (a token endpoint
that was down is retried by following it again)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets as randomness
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from ..errors import AgentRuntimeError
from ..stores.base import Store
from ..stores.exceptions import VersionConflictError
from ..stores.items import ConnectAsk, ConnectAttempt
from ..triggers import fields
from ..workflows import Workflow
from ..workflows.oauth import STATE_KEY, OAuthProvider
from .exceptions import FlowRefused
from .provider import GrantRefused, ProviderClient, ProviderError, pkce_pair
from .vault import Vault

ATTEMPT_SECONDS = 15 * 60  # from the link to the provider's answer
ASK_ID = re.compile(r"[A-Za-z0-9_-]{43}")
STATE = re.compile(r"([A-Za-z0-9_-]{43})\.([0-9a-f]{64})")
CODE = re.compile(r"[\x21-\x7e]{1,2048}")
ERROR = re.compile(r"[\x20-\x7e]{1,200}")


@dataclass(frozen=True, slots=True)
class Finished:
    """The provider answered an ask: ``connected`` (the tokens are sealed) or ``denied`` (the person declined)."""

    ask: ConnectAsk
    outcome: str
    attempt: str  # the state's nonce: what the "connected" message is deduplicated by


def ask_partition(ask: str) -> str:
    return f"oauth-ask#{ask}"


def attempt_partition(nonce: str) -> str:
    return f"oauth-attempt#{nonce}"


class ConnectFlow:
    """``workflow(name)``: a workflow by name (its providers); ``secrets(name)``: the integrations secret's keys;
    ``base_url``: the stack's API (the redirect URI is ``<base_url>/oauth/<provider>/callback``)."""

    def __init__(
        self,
        store: Store,
        vault: Vault,
        *,
        workflow: Callable[[str], Workflow],
        secrets: Callable[[str], str | None],
        base_url: str,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.store, self.vault, self.workflow, self.secrets = store, vault, workflow, secrets
        self.base_url, self.clock = base_url.rstrip("/"), clock

    def ask(self, ask: ConnectAsk) -> tuple[str, str]:
        """The ask kept (until it expires, and a day more: a late click is told so): its id and the link to send."""
        ask_id = randomness.token_urlsafe(32)
        ttl = int(ask.expires_at - self.clock()) + 86_400
        self.store.put_item(ask_partition(ask_id), ConnectAsk.NAME, ask.to_data(), expected_version=None, ttl=ttl)
        return ask_id, self.link(ask.provider, ask_id)

    def link(self, provider: str, ask_id: str) -> str:
        return f"{self.base_url}/oauth/{provider}/start?ask={ask_id}"

    def status(self, ask_id: str) -> str:
        found = self.store.get_item(ask_partition(ask_id), ConnectAsk.NAME)
        return ConnectAsk.from_data(found.data).status if found is not None else "gone"

    def start(self, provider: str, query: Mapping[str, str], *, base: str | None = None) -> str:
        """The provider's authorisation URL for a fresh attempt at the ask the link names (``base``: the stack's
        address as the request came to it, when this process is not told it)."""
        ask_id = _field(query.get("ask"), "ask", ASK_ID, 404)
        ask, _ = self._open_ask(ask_id, provider)
        client = self._client(ask)[1]
        nonce, (verifier, challenge) = randomness.token_urlsafe(32), pkce_pair()
        attempt = ConnectAttempt(ask_id, ask.person, provider, ask.run_id, verifier, self.clock() + ATTEMPT_SECONDS)
        self.store.put_item(
            attempt_partition(nonce), ConnectAttempt.NAME, attempt.to_data(), expected_version=None, ttl=86_400
        )
        redirect = self.redirect_uri(provider, base)
        return client.authorize_url(redirect, f"{nonce}.{self._sign(nonce, attempt)}", challenge)

    def redirect_uri(self, provider: str, base: str | None = None) -> str:
        """The callback the provider sends the person back to (register it there): ``<api>/oauth/<p>/callback``."""
        return f"{self.base_url or (base or '').rstrip('/')}/oauth/{provider}/callback"

    def callback(self, provider: str, query: Mapping[str, str], *, base: str | None = None) -> Finished:
        """The provider's answer: the state checked and used up first, then the code exchanged (or the refusal)."""
        nonce, attempt, version = self._attempt(provider, query.get("state"))
        try:  # used once: a replay of this state loses here
            used = replace(attempt, used=True).to_data()
            self.store.put_item(attempt_partition(nonce), ConnectAttempt.NAME, used, expected_version=version)
        except VersionConflictError:
            raise FlowRefused(400, "this answer was used already (a replay): follow the link again") from None
        ask, ask_version = self._open_ask(attempt.ask, provider)
        if query.get("error"):
            said = _field(query.get("error"), "error", ERROR, 400)
            self._settle(attempt.ask, ask, ask_version, "denied")
            return Finished(ask, "denied" if said == "access_denied" else f"denied ({said})", nonce)
        code = _field(query.get("code"), "code", CODE, 400)
        settings, client = self._client(ask)
        try:
            tokens = client.exchange(code, attempt.verifier, self.redirect_uri(provider, base))
        except GrantRefused as error:
            raise FlowRefused(400, f"{provider} refused the code ({error}): follow the link again") from None
        except ProviderError as error:
            raise FlowRefused(502, f"{error}: nothing was connected; follow the link again in a while") from None
        self.vault.save(ask.person, provider, tokens, workflow=ask.workflow, client_id=settings.client_id)
        self._settle(attempt.ask, ask, ask_version, "connected")
        return Finished(ask, "connected", nonce)

    def _attempt(self, provider: str, state: str | None) -> tuple[str, ConnectAttempt, int]:
        given = STATE.fullmatch(state or "") if (state or "").isascii() else None
        if given is None:
            raise FlowRefused(400, "no state this stack made: start again from the link you were sent")
        nonce, signature = given.group(1), given.group(2)
        found = self.store.get_item(attempt_partition(nonce), ConnectAttempt.NAME)
        attempt = ConnectAttempt.from_data(found.data) if found is not None else None
        if found is None or attempt is None or not fields.same(self._sign(nonce, attempt), signature):
            raise FlowRefused(400, "this state was not made by this stack (forged, or altered)")
        if attempt.provider != provider:
            raise FlowRefused(400, f"this state is for {attempt.provider}, not {provider}")
        if attempt.used:
            raise FlowRefused(400, "this answer was used already (a replay): follow the link again")
        if attempt.expires_at <= self.clock():
            raise FlowRefused(400, "this attempt took too long: follow the link again")
        return nonce, attempt, found.version

    def _open_ask(self, ask_id: str, provider: str) -> tuple[ConnectAsk, int]:
        found = self.store.get_item(ask_partition(ask_id), ConnectAsk.NAME)
        ask = ConnectAsk.from_data(found.data) if found is not None else None
        if found is None or ask is None or ask.provider != provider:
            raise FlowRefused(404, "no such request to connect (it expired, or the link was altered)")
        if ask.status != "open":
            raise FlowRefused(410, f"this request was {ask.status} already: nothing more to do here")
        if ask.expires_at <= self.clock():
            raise FlowRefused(410, "this request to connect has expired: the run went on without it")
        return ask, found.version

    def _settle(self, ask_id: str, ask: ConnectAsk, version: int, status: str) -> None:
        try:
            data = replace(ask, status=status).to_data()
            self.store.put_item(ask_partition(ask_id), ConnectAsk.NAME, data, expected_version=version)
        except VersionConflictError:
            pass  # another attempt settled it first: the first one stands

    def _client(self, ask: ConnectAsk) -> tuple[OAuthProvider, ProviderClient]:
        try:
            settings = self.workflow(ask.workflow).oauth.providers[ask.provider]
        except (AgentRuntimeError, KeyError):
            raise FlowRefused(404, f"the workflow {ask.workflow} no longer declares {ask.provider}") from None
        secret = self.secrets(settings.secret_name) if settings.secret_name else None
        return settings, ProviderClient(settings, secret, clock=self.clock)

    def _sign(self, nonce: str, attempt: ConnectAttempt) -> str:
        key = self.secrets(STATE_KEY)
        if not key:
            raise FlowRefused(503, f"connections are not set up here: the integrations secret has no {STATE_KEY}")
        bound = "\n".join(("oauth-state", nonce, attempt.ask, attempt.person, attempt.run_id, attempt.provider))
        return hmac.new(key.encode(), bound.encode(), hashlib.sha256).hexdigest()


def _field(value: str | None, name: str, pattern: re.Pattern[str], status: int) -> str:
    """A field of the query, read by the one strict parser of unauthenticated fields; refused with a reason."""
    try:
        return fields.token(value, name, pattern, status=status)
    except fields.FieldError as error:
        raise FlowRefused(status, f"{error.reason}: start again from the link you were sent") from None
