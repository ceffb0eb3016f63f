"""Tools that act as the person who asked (issue 53): OAuth 2.0 connections per person and provider — the
authorisation code flow with PKCE and a signed, once-only ``state`` (``flow``), the provider's endpoints
(``provider``), the tokens sealed under the stack's KMS key (``vault``), a run's connections and the gate its calls
wait at until the person has connected (``connections``, ``gate``)."""

from __future__ import annotations

from .connections import Asked, Asker, Connections, Need
from .gate import CONNECTIONS, ConnectEntry, ConnectGate, bound, gated
from .provider import GrantRefused, ProviderClient, ProviderError, TokenSet
from .vault import Held, KmsKeyring, LocalKeyring, Vault

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
