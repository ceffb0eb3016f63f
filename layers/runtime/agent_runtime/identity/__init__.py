"""Tools that act as the person who asked (issue 53): OAuth 2.0 connections per person and provider — the
authorisation code flow with PKCE and a signed, once-only ``state`` (``flow``), the provider's endpoints
(``provider``), the tokens sealed under the stack's KMS key (``vault``), a run's connections and the gate its calls
wait at until the person has connected (``connections``, ``gate``). Exports are lazy: the webhook's authorisation
routes need the flow, not the gate (which loads the run's events)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .connections import Asked, Asker, Connections, Need
    from .gate import ConnectGate, bound, gated
    from .provider import GrantRefused, ProviderClient, ProviderError, TokenSet
    from .vault import Held, KmsKeyring, LocalKeyring, Vault
    from .waiting import CONNECTIONS, ConnectEntry

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(("Asked", "Asker", "Connections", "Need"), ".connections"),
        **dict.fromkeys(("ConnectGate", "bound", "gated"), ".gate"),
        **dict.fromkeys(("CONNECTIONS", "ConnectEntry"), ".waiting"),
        **dict.fromkeys(("GrantRefused", "ProviderClient", "ProviderError", "TokenSet"), ".provider"),
        **dict.fromkeys(("Held", "KmsKeyring", "LocalKeyring", "Vault"), ".vault"),
    },
)

__all__ = [
    "CONNECTIONS",
    "Asked",
    "Asker",
    "ConnectEntry",
    "ConnectGate",
    "Connections",
    "GrantRefused",
    "Held",
    "KmsKeyring",
    "LocalKeyring",
    "Need",
    "ProviderClient",
    "ProviderError",
    "TokenSet",
    "Vault",
    "bound",
    "gated",
]
