"""Where a person's tokens are kept: one item per person and provider (``oauth#<person>#<provider>``), sealed.

Envelope encryption: each write takes a fresh 256-bit data key from the keyring — the stack's KMS key in AWS
(``GenerateDataKey``, the person and provider as its encryption context, so a key unwraps only for the item it was
made for), a key file of the state directory locally — and seals the tokens with AES-GCM, the person and provider
as associated data. The item keeps the wrapped key, never the plain one; the table holds no token in clear.

A token read is handed to the redactor at once: from then on no log record, stored record or trace of the process
carries it (``redaction``)."""

from __future__ import annotations

import base64
import json
import os
import secrets as randomness
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..errors import AgentRuntimeError
from ..redaction import Redactor
from ..stores.base import Store
from ..stores.exceptions import VersionConflictError
from ..stores.items import Connection
from .provider import TokenSet

TTL = 180 * 24 * 3600  # a connection unused (never refreshed) for this long goes with DynamoDB's TTL
NAME = Connection.NAME


class SealError(AgentRuntimeError):
    """A connection's item could not be opened (another key, altered, or the keyring refused): it is forgotten."""


class Keyring(Protocol):
    @property
    def name(self) -> str: ...

    def new_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        """A fresh data key, plain and wrapped (the wrapped one bound to ``context``)."""
        ...

    def unwrap(self, wrapped: bytes, context: dict[str, str]) -> bytes: ...


@dataclass(frozen=True)
class KmsKeyring:
    """The stack's KMS key (``AGENT_KMS_KEY_ID``): a data key per write, unwrapped with the same context."""

    client: Any  # boto3 kms
    key_id: str

    @property
    def name(self) -> str:
        return f"kms:{self.key_id}"

    def new_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        made = self.client.generate_data_key(KeyId=self.key_id, KeySpec="AES_256", EncryptionContext=context)
        return bytes(made["Plaintext"]), bytes(made["CiphertextBlob"])

    def unwrap(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        opened = self.client.decrypt(CiphertextBlob=wrapped, EncryptionContext=context, KeyId=self.key_id)
        return bytes(opened["Plaintext"])


@dataclass(frozen=True)
class LocalKeyring:
    """A key file (made once, 0600) for ``agent-runtime run`` and ``serve``: the state directory's own."""

    path: Path
    name: str = "local"

    def _master(self) -> bytes:
        return key_file(self.path)

    def new_key(self, context: dict[str, str]) -> tuple[bytes, bytes]:
        key = randomness.token_bytes(32)
        return key, _seal(self._master(), key, context)

    def unwrap(self, wrapped: bytes, context: dict[str, str]) -> bytes:
        return _open(self._master(), wrapped, context)


def key_file(path: Path) -> bytes:
    """A local key: 32 random bytes in ``path``, made once (0600, never overwritten: two processes starting at once
    both read the first one's)."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            return path.read_bytes()
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(randomness.token_bytes(32))
    return path.read_bytes()


@dataclass(frozen=True, slots=True)
class Held:
    """A person's connection as read: the tokens, the workflow it was made through, the item's version."""

    tokens: TokenSet
    workflow: str
    client_id: str
    version: int
    connected_at: float = 0.0


def partition(person: str, provider: str) -> str:
    return f"oauth#{person}#{provider}"


class Vault:
    def __init__(self, store: Store, keyring: Keyring, *, clock: Callable[[], float] = time.time) -> None:
        self.store, self.keyring, self.clock = store, keyring, clock

    def save(self, person: str, provider: str, tokens: TokenSet, *, workflow: str, client_id: str) -> None:
        """A new connection (or the person's again), over whatever was kept."""
        current = self.store.get_item(partition(person, provider), NAME)
        item = self._item(person, provider, tokens, workflow, client_id, connected=self.clock())
        self.store.put_item(
            partition(person, provider),
            NAME,
            item.to_data(),
            expected_version=current.version if current else None,
            ttl=TTL,
        )

    def _item(
        self, person: str, provider: str, tokens: TokenSet, workflow: str, client_id: str, *, connected: float
    ) -> Connection:
        Redactor(tokens.values())
        context = {"person": person, "provider": provider}
        key, wrapped = self.keyring.new_key(context)
        secret = {"access_token": tokens.access_token, "refresh_token": tokens.refresh_token}
        sealed = _seal(key, json.dumps(secret | {"token_type": tokens.token_type}).encode(), context)
        return Connection(
            sealed=_b64(sealed),
            wrapped_key=_b64(wrapped),
            keyring=self.keyring.name,
            workflow=workflow,
            client_id=client_id,
            scope=tokens.scope,
            expires_at=tokens.expires_at,
            connected_at=connected,
            refreshed_at=self.clock(),
        )

    def load(self, person: str, provider: str) -> Held | None:
        """The person's tokens for ``provider`` (None: not connected); an item that will not open is forgotten."""
        found = self.store.get_item(partition(person, provider), NAME)
        if found is None:
            return None
        item = Connection.from_data(found.data)
        context = {"person": person, "provider": provider}
        try:
            key = self.keyring.unwrap(base64.b64decode(item.wrapped_key), context)
            opened = json.loads(_open(key, base64.b64decode(item.sealed), context))
        except Exception as error:  # another key, altered bytes, a refusing keyring: nothing usable here
            self.forget(person, provider)
            raise SealError(f"the {provider} connection could not be opened ({type(error).__name__})") from None
        tokens = TokenSet(
            access_token=str(opened["access_token"]),
            token_type=str(opened.get("token_type") or "Bearer"),
            refresh_token=opened.get("refresh_token") or None,
            expires_at=item.expires_at,
            scope=item.scope,
        )
        Redactor(tokens.values())
        return Held(tokens, item.workflow, item.client_id, found.version, item.connected_at)

    def replace(self, person: str, provider: str, held: Held, tokens: TokenSet) -> bool:
        """Refreshed tokens in place of ``held`` — unless another invocation refreshed first (False: read again)."""
        item = self._item(person, provider, tokens, held.workflow, held.client_id, connected=held.connected_at)
        try:
            self.store.put_item(
                partition(person, provider), NAME, item.to_data(), expected_version=held.version, ttl=TTL
            )
        except VersionConflictError:
            return False
        return True

    def forget(self, person: str, provider: str) -> bool:
        """The connection gone from the store (True when there was one)."""
        return self.store.delete_partition(partition(person, provider)) > 0


def _seal(key: bytes, data: bytes, context: dict[str, str]) -> bytes:
    nonce = randomness.token_bytes(12)
    return nonce + AESGCM(key).encrypt(nonce, data, _aad(context))


def _open(key: bytes, sealed: bytes, context: dict[str, str]) -> bytes:
    return AESGCM(key).decrypt(sealed[:12], sealed[12:], _aad(context))


def _aad(context: dict[str, str]) -> bytes:
    return json.dumps(context, sort_keys=True).encode()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
