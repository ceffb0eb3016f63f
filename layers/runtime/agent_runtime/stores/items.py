"""Every item a run's or a thread's partition keeps beside its checkpoint, record and state, typed: one frozen
dataclass per kind, written with ``to_data`` and read back through one registry keyed by the item's name (or the
prefix of names that carry a key: ``approval#<call id>``). Nothing untyped crosses the store's boundary: a reader
gets the dataclass, never the JSON object.

The JSON each writes is what earlier versions wrote, so items already stored read back unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol, Self, TypeVar

from ..inbound import TriggerEvent
from ..stopping import StopRequest


class StoredItem(Protocol):
    NAME: ClassVar[str]  # the item's name in its partition, or the prefix (ending in '#') before its key

    def to_data(self) -> dict[str, Any]: ...


T = TypeVar("T", bound=StoredItem)
_KINDS: dict[str, Callable[[Mapping[str, Any]], Any]] = {}


def stored(cls: type[T]) -> type[T]:
    """Registers an item kind: its NAME (or name prefix) reads back through ``cls.from_data``."""
    if cls.NAME in _KINDS:
        raise RuntimeError(f"two kinds of stored item named {cls.NAME!r}")
    _KINDS[cls.NAME] = cls.from_data  # type: ignore[attr-defined]
    return cls


def kind_of(name: str) -> str | None:
    """The registered kind an item's name belongs to: the name itself, or its prefix up to the first '#'."""
    if name in _KINDS:
        return name
    prefix = name.split("#", 1)[0] + "#"
    return prefix if "#" in name and prefix in _KINDS else None


def parse(name: str, data: Mapping[str, Any]) -> Any:
    """The typed item a stored name and its JSON make; KeyError for a name no kind claims."""
    kind = kind_of(name)
    if kind is None:
        raise KeyError(name)
    return _KINDS[kind](data)


def _text(data: Mapping[str, Any], key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def _run_id(data: Mapping[str, Any]) -> str | None:
    value = data.get("run_id")
    return str(value) if value else None


# A run's partition (run#<id>)


@stored
@dataclass(frozen=True, slots=True)
class Reply:
    """The answer's journal: ``posting`` while it goes out, ``posted`` once it is out (a redelivery posts none).
    While posting it keeps the answer's text (and whether it may be rated): an invocation cut off mid-post leaves
    the next one what to finish (``service/answer.py``)."""

    NAME: ClassVar[str] = "reply"
    state: str
    chars: int = 0
    files: int = 0
    text: str = ""
    rated: bool = False

    def to_data(self) -> dict[str, Any]:
        if self.state == "posted":
            return {"state": self.state, "chars": self.chars, "files": self.files}
        return {"state": self.state} | ({"text": self.text, "rated": self.rated} if self.text else {})

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        chars, files, rated = int(data.get("chars") or 0), int(data.get("files") or 0), bool(data.get("rated"))
        return cls(_text(data, "state", "posting"), chars, files, _text(data, "text"), rated)


@stored
@dataclass(frozen=True, slots=True)
class Progress:
    """The chat message that shows the run's progress and becomes its answer."""

    NAME: ClassVar[str] = "progress"
    ts: str

    def to_data(self) -> dict[str, Any]:
        return {"ts": self.ts}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(_text(data, "ts"))


@stored
@dataclass(frozen=True, slots=True)
class Streamed:
    """The message the answer streams into, kept from its start: ``open`` while it streams, ``answered`` once it
    ended with the answer, ``stopped`` when ended otherwise (the run waits), ``gone`` once a later invocation ended
    and deleted the one a cut-off invocation left open (its cursor would blink forever)."""

    NAME: ClassVar[str] = "stream"
    ts: str
    state: str = "open"

    def to_data(self) -> dict[str, Any]:
        return {"ts": self.ts, "state": self.state}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(_text(data, "ts"), _text(data, "state", "open"))


@stored
@dataclass(frozen=True, slots=True)
class ThreadBase:
    """The thread's version the turn started from, and the files it had (None: a run from before files were kept)."""

    NAME: ClassVar[str] = "thread-base"
    version: int | None
    files: tuple[str, ...] | None = None

    def to_data(self) -> dict[str, Any]:
        return {"version": self.version} | ({"files": list(self.files)} if self.files is not None else {})

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        version, files = data.get("version"), data.get("files")
        return cls(None if version is None else int(version), None if files is None else tuple(map(str, files)))


@stored
@dataclass(frozen=True, slots=True)
class Asked:
    """Where an approval request was asked: a Slack message (``ts``), or a JIRA comment with the request's code."""

    NAME: ClassVar[str] = "approval-asked#"
    ts: str = ""
    comment: str = ""
    code: str = ""

    def to_data(self) -> dict[str, Any]:
        return {key: value for key, value in (("ts", self.ts), ("comment", self.comment), ("code", self.code)) if value}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(_text(data, "ts"), _text(data, "comment"), _text(data, "code"))


@stored
@dataclass(frozen=True, slots=True)
class Decided:
    """The first decision on an approval request (approved, denied, expired, closed): who, when. Later ones lose."""

    NAME: ClassVar[str] = "approval#"
    decision: str
    by: str
    at: float

    def to_data(self) -> dict[str, Any]:
        return {"decision": self.decision, "by": self.by, "at": self.at}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(_text(data, "decision"), _text(data, "by"), float(data.get("at") or 0.0))


@stored
@dataclass(frozen=True, slots=True)
class Announced:
    """The runs channel's line about the run: where it is and its text (ratings are added to it)."""

    NAME: ClassVar[str] = "announced"
    channel: str
    ts: str
    text: str

    def to_data(self) -> dict[str, Any]:
        return {"channel": self.channel, "ts": self.ts, "text": self.text}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(_text(data, "channel"), _text(data, "ts"), _text(data, "text"))


stored(StopRequest)  # a person asked the run to stop (who, when, from where): the first request wins
stored(TriggerEvent)  # what started the run, so a continuation knows where to answer


# A thread's partition (thread#<id>)


@stored
@dataclass(frozen=True, slots=True)
class ActiveRun:
    """The run of the thread's turn under way (suspended, waiting for a decision, or killed mid-run)."""

    NAME: ClassVar[str] = "active-run"
    run_id: str | None

    def to_data(self) -> dict[str, Any]:
        return {"run_id": self.run_id}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(_run_id(data))


@stored
@dataclass(frozen=True, slots=True)
class LatestRun:
    """The run the thread's newest turn started: "stop" written in the thread stops it if it has not answered."""

    NAME: ClassVar[str] = "latest-run"
    run_id: str | None

    def to_data(self) -> dict[str, Any]:
        return {"run_id": self.run_id}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(_run_id(data))


@stored
@dataclass(frozen=True, slots=True)
class Deferred:
    """Queue messages that came while the thread's turn waited for a decision, oldest first: sent again, as they
    came, once it ends (each a queue body: the queue's own JSON, re-sent verbatim, parsed by the worker)."""

    NAME: ClassVar[str] = "deferred"
    messages: tuple[Mapping[str, Any], ...] = ()

    def to_data(self) -> dict[str, Any]:
        return {"messages": [dict(message) for message in self.messages]}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(tuple(m for m in data.get("messages") or () if isinstance(m, Mapping)))


@stored
@dataclass(frozen=True, slots=True)
class SpendRaise:
    """What approvers added to the thread's spend limit on ``day`` (UTC), and the decisions that did (``keys``: a
    redelivered message raises nothing more)."""

    NAME: ClassVar[str] = "spend-raise"
    day: str
    dollars: float
    by: str = ""
    keys: tuple[str, ...] = field(default=())

    def to_data(self) -> dict[str, Any]:
        return {"day": self.day, "dollars": self.dollars, "by": self.by, "keys": list(self.keys)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        keys = tuple(str(key) for key in data.get("keys") or ())
        return cls(_text(data, "day"), float(data.get("dollars") or 0.0), _text(data, "by"), keys)


@stored
@dataclass(frozen=True, slots=True)
class Pane:
    """A Slack assistant thread (the app's pane): who opened it and the channel they have open beside it."""

    NAME: ClassVar[str] = "pane"
    user: str = ""
    viewing: str | None = None

    def to_data(self) -> dict[str, Any]:
        return {"user": self.user, "viewing": self.viewing}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        viewing = data.get("viewing")
        return cls(_text(data, "user"), str(viewing) if viewing else None)


# A person's connection to an OAuth provider (oauth#<person>#<provider>), a run's request that they connect
# (oauth-ask#<id>) and one attempt at it, from the link to the provider's answer (oauth-attempt#<state nonce>)


@stored
@dataclass(frozen=True, slots=True)
class Connection:
    """A person's tokens for one provider, sealed (AES-GCM under a data key the stack's KMS key wraps; the person
    and provider bound in as associated data), and what may be known of them in clear."""

    NAME: ClassVar[str] = "connection"
    sealed: str  # base64: nonce + ciphertext of {"access_token", "refresh_token", "token_type"}
    wrapped_key: str  # base64: the data key as the keyring wrapped it
    keyring: str  # which keyring wrapped it (kms:<key id> | local)
    workflow: str  # connected through this workflow's provider (its client, its secret)
    client_id: str
    scope: str = ""
    expires_at: float | None = None  # the access token's, when the provider said
    connected_at: float = 0.0
    refreshed_at: float = 0.0

    def to_data(self) -> dict[str, Any]:
        return {
            "sealed": self.sealed,
            "wrapped_key": self.wrapped_key,
            "keyring": self.keyring,
            "workflow": self.workflow,
            "client_id": self.client_id,
            "scope": self.scope,
            "expires_at": self.expires_at,
            "connected_at": self.connected_at,
            "refreshed_at": self.refreshed_at,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        expires = data.get("expires_at")
        return cls(
            _text(data, "sealed"),
            _text(data, "wrapped_key"),
            _text(data, "keyring"),
            _text(data, "workflow"),
            _text(data, "client_id"),
            _text(data, "scope"),
            float(expires) if isinstance(expires, int | float) else None,
            float(data.get("connected_at") or 0.0),
            float(data.get("refreshed_at") or 0.0),
        )


@stored
@dataclass(frozen=True, slots=True)
class ConnectAsk:
    """A run asked its person to connect a provider: the link's target (open until connected, declined or past)."""

    NAME: ClassVar[str] = "connect-ask"
    person: str
    provider: str
    workflow: str
    run_id: str
    thread_id: str
    expires_at: float
    status: str = "open"  # open | connected | denied

    def to_data(self) -> dict[str, Any]:
        return {
            "person": self.person,
            "provider": self.provider,
            "workflow": self.workflow,
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "expires_at": self.expires_at,
            "status": self.status,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            _text(data, "person"),
            _text(data, "provider"),
            _text(data, "workflow"),
            _text(data, "run_id"),
            _text(data, "thread_id"),
            float(data.get("expires_at") or 0.0),
            _text(data, "status", "open"),
        )


@stored
@dataclass(frozen=True, slots=True)
class ConnectAttempt:
    """One trip to the provider for an ask: the PKCE verifier, what the signed ``state`` binds, and whether its
    answer came (once: a replayed ``state`` finds it used)."""

    NAME: ClassVar[str] = "connect-attempt"
    ask: str
    person: str
    provider: str
    run_id: str
    verifier: str
    expires_at: float
    used: bool = False

    def to_data(self) -> dict[str, Any]:
        return {
            "ask": self.ask,
            "person": self.person,
            "provider": self.provider,
            "run_id": self.run_id,
            "verifier": self.verifier,
            "expires_at": self.expires_at,
            "used": self.used,
        }

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(
            _text(data, "ask"),
            _text(data, "person"),
            _text(data, "provider"),
            _text(data, "run_id"),
            _text(data, "verifier"),
            float(data.get("expires_at") or 0.0),
            data.get("used") is True,
        )
