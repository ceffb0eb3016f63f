"""Every item a run's or a thread's partition keeps beside its checkpoint, record and state, typed: one frozen
dataclass per kind, written with ``to_data`` and read back through one registry keyed by the item's name (or the
prefix of names that carry a key: ``approval#<call id>``). Nothing untyped crosses the store's boundary: a reader
gets the dataclass, never the JSON object.

The JSON each writes is what earlier versions wrote, so items already stored read back unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, Self, TypeVar

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
    if issubclass(cls, Fields):
        unread = [f"{f.name}: {f.type}" for f in fields(cls) if str(f.type) not in _READ]
        if unread:
            raise TypeError(f"stored item {cls.NAME!r}: no way to read {', '.join(unread)} (add it to _READ)")
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


# How a field of each type reads back from what was stored (``None``: the key missing or null); ``default`` is the
# field's own default, or its type's empty value. Lenient as the items always were: a stored item never fails a run.
_READ: dict[str, Callable[[Any, Any], Any]] = {
    "str": lambda value, default: (default or "") if value is None else str(value),
    "str | None": lambda value, default: str(value) if value else None,
    "float": lambda value, default: float(value or 0.0),
    "float | None": lambda value, default: float(value) if isinstance(value, int | float) else None,
    "bool": lambda value, default: value is True,
    "tuple[str, ...]": lambda value, default: tuple(str(each) for each in value or ()),
}


class Fields:
    """An item stored as its fields, by name and in their order (a tuple as a list), each read back by its type
    (``_READ``). Its dataclass is frozen and slotted; a kind whose stored shape is its own overrides either side."""

    __slots__ = ()
    __dataclass_fields__: ClassVar[dict[str, Any]]

    if TYPE_CHECKING:

        def __init__(self, *values: Any) -> None: ...

    def to_data(self) -> dict[str, Any]:
        return {f.name: _written(getattr(self, f.name)) for f in fields(self)}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> Self:
        return cls(*(_READ[str(f.type)](data.get(f.name), _default(f)) for f in fields(cls)))


def _written(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def _default(f: Field[Any]) -> Any:
    return None if f.default is MISSING else f.default


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
class Progress(Fields):
    """The chat message that shows the run's progress and becomes its answer."""

    NAME: ClassVar[str] = "progress"
    ts: str


@stored
@dataclass(frozen=True, slots=True)
class Streamed(Fields):
    """The message the answer streams into, kept from its start: ``open`` while it streams, ``answered`` once it
    ended with the answer, ``stopped`` when ended otherwise (the run waits), ``gone`` once a later invocation ended
    and deleted the one a cut-off invocation left open (its cursor would blink forever)."""

    NAME: ClassVar[str] = "stream"
    ts: str
    state: str = "open"


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
class Asked(Fields):
    """Where an approval request was asked: a Slack message (``ts``), or a JIRA comment with the request's code."""

    NAME: ClassVar[str] = "approval-asked#"
    ts: str = ""
    comment: str = ""
    code: str = ""

    def to_data(self) -> dict[str, Any]:
        return {key: value for key, value in Fields.to_data(self).items() if value}  # only the one it was asked by


@stored
@dataclass(frozen=True, slots=True)
class Decided(Fields):
    """The first decision on an approval request (approved, denied, expired, closed): who, when. Later ones lose."""

    NAME: ClassVar[str] = "approval#"
    decision: str
    by: str
    at: float


@stored
@dataclass(frozen=True, slots=True)
class Announced(Fields):
    """The runs channel's line about the run: where it is and its text (ratings are added to it)."""

    NAME: ClassVar[str] = "announced"
    channel: str
    ts: str
    text: str


stored(StopRequest)  # a person asked the run to stop (who, when, from where): the first request wins
stored(TriggerEvent)  # what started the run, so a continuation knows where to answer


# A thread's partition (thread#<id>)


@stored
@dataclass(frozen=True, slots=True)
class ActiveRun(Fields):
    """The run of the thread's turn under way (suspended, waiting for a decision, or killed mid-run)."""

    NAME: ClassVar[str] = "active-run"
    run_id: str | None


@stored
@dataclass(frozen=True, slots=True)
class LatestRun(Fields):
    """The run the thread's newest turn started: "stop" written in the thread stops it if it has not answered."""

    NAME: ClassVar[str] = "latest-run"
    run_id: str | None


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
class SpendRaise(Fields):
    """What approvers added to the thread's spend limit on ``day`` (UTC), and the decisions that did (``keys``: a
    redelivered message raises nothing more)."""

    NAME: ClassVar[str] = "spend-raise"
    day: str
    dollars: float
    by: str = ""
    keys: tuple[str, ...] = field(default=())


@stored
@dataclass(frozen=True, slots=True)
class Pane(Fields):
    """A Slack assistant thread (the app's pane): who opened it and the channel they have open beside it."""

    NAME: ClassVar[str] = "pane"
    user: str = ""
    viewing: str | None = None


# A person's connection to an OAuth provider (oauth#<person>#<provider>), a run's request that they connect
# (oauth-ask#<id>) and one attempt at it, from the link to the provider's answer (oauth-attempt#<state nonce>)


@stored
@dataclass(frozen=True, slots=True)
class Connection(Fields):
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


@stored
@dataclass(frozen=True, slots=True)
class ConnectAsk(Fields):
    """A run asked its person to connect a provider: the link's target (open until connected, declined or past)."""

    NAME: ClassVar[str] = "connect-ask"
    person: str
    provider: str
    workflow: str
    run_id: str
    thread_id: str
    expires_at: float
    status: str = "open"  # open | connected | denied


@stored
@dataclass(frozen=True, slots=True)
class ConnectAttempt(Fields):
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
