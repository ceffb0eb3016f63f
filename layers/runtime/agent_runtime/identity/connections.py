"""One run's connections: who it acts for, their tokens (fresh: refreshed when they expire, forgotten when the
provider refuses them), and who asks that person to connect when a tool needs a provider they have not connected.

Who a run acts for is explicit for every trigger (``Source.acts_for``): the person who wrote or reacted, a
schedule's ``owner``, a webhook's mapped identity. A run that acts for nobody keeps the reason, and its tools that
act as the requester refuse with it."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..credentials import Credential
from ..errors import ToolError
from ..workflows.oauth import OAuthProvider
from .provider import GrantRefused, ProviderClient, ProviderError
from .vault import Held, SealError, Vault

EARLY_SECONDS = 60.0  # an access token this close to its expiry is refreshed before use


@dataclass(frozen=True, slots=True)
class Need:
    """A call needs ``person`` to connect ``provider`` (asked once per run and provider)."""

    person: str
    provider: str
    run_id: str
    tool: str
    expires_at: float


@dataclass(frozen=True, slots=True)
class Asked:
    """What asking did: ``ask`` (the request's id: the run waits), or the person ``connected`` at once (a terminal
    that waited), or ``refused`` with why nobody could be asked (no private channel to them)."""

    ask: str | None = None
    connected: bool = False
    refused: str | None = None


class Asker(Protocol):
    def ask(self, need: Need) -> Asked:
        """Ask ``need.person`` to connect, privately (a link to the stack's authorisation route)."""
        ...

    def status(self, ask: str) -> str:
        """open | connected | denied | gone (the request's item expired)."""
        ...


@dataclass
class Connections:
    """``person``: who the run acts for (None: nobody, and ``why_not`` says why)."""

    person: str | None
    providers: Mapping[str, OAuthProvider]
    vault: Vault | None = None
    asker: Asker | None = None
    secrets: Callable[[str], str | None] = lambda name: None
    why_not: str = ""
    timeout_hours: float = 24.0
    clock: Callable[[], float] = time.time
    live: dict[str, Credential] = field(default_factory=dict)  # checked at the gate, for this invocation's calls
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def unusable(self, provider: str) -> str | None:
        """Why no call through ``provider`` can be made in this run at all (None: it can, once connected)."""
        if self.person is None:
            return self.why_not or "this run acts for nobody"
        if provider not in self.providers:
            return f"no provider {provider!r} in the workflow's oauth.providers"
        if self.vault is None:
            return "this process keeps no connections (no store or key)"
        return None

    def credential(self, provider: str) -> Credential | None:
        """The person's fresh credential (refreshed first when it is about to expire); None: not connected (or
        the provider refused the grant: forgotten). ``ToolError`` when the provider cannot be reached."""
        if self.unusable(provider) or self.vault is None or self.person is None:
            return None
        with self._lock:  # parallel calls through one provider refresh once
            try:
                held = self.vault.load(self.person, provider)
            except SealError:
                return None
            if held is None:
                return None
            if _expiring(held, self.clock()):
                held = self._refreshed(provider, held)
            if held is None:
                return None
            found = Credential(provider, self.person, held.tokens.access_token, held.tokens.token_type)
            self.live[provider] = found
            return found

    def _refreshed(self, provider: str, held: Held) -> Held | None:
        assert self.vault is not None and self.person is not None
        if not held.tokens.refresh_token:
            self.vault.forget(self.person, provider)
            return None
        settings = self.providers[provider]
        secret = self.secrets(settings.secret_name) if settings.secret_name else None
        try:
            tokens = ProviderClient(settings, secret, clock=self.clock).refresh(held.tokens.refresh_token)
        except GrantRefused:
            again = self.vault.load(self.person, provider)  # another invocation may have rotated it first
            if again is not None and again.version != held.version:
                return again
            self.vault.forget(self.person, provider)
            return None
        except ProviderError as error:
            raise ToolError(f"{provider}: the connection could not be refreshed: {error}") from None
        if not self.vault.replace(self.person, provider, held, tokens):
            return self.vault.load(self.person, provider)
        return Held(tokens, held.workflow, held.client_id, held.version + 1, held.connected_at)

    def forget(self, provider: str) -> None:
        """The provider refused the token (revoked): gone, so the next call asks the person again."""
        self.live.pop(provider, None)
        if self.vault is not None and self.person is not None:
            self.vault.forget(self.person, provider)


def _expiring(held: Held, now: float) -> bool:
    return held.tokens.expires_at is not None and held.tokens.expires_at - EARLY_SECONDS <= now
