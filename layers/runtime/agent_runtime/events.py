"""What a run's record says happened: small typed events, stored as flat JSON (``{"type": ..., "at": ..., ...}``).

Components record them (``record.event(Compaction(...))``); the trace and the worker's metrics read them by type.
A stored event comes back to its class through one registry keyed by its ``type`` (:func:`read_event`: every
class below registers its ``kind``), so a stored run's readers (``views``) match on classes too, never on names.
Each is also a read-only mapping of its JSON form (``event["type"]``).
"""

from __future__ import annotations

import functools
import types
import typing
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, dataclass, field, fields
from datetime import UTC, datetime
from typing import Any, ClassVar

KINDS: dict[str, type[RunEvent]] = {}  # the stored ``type`` → its class: every event class registers its kind


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


@dataclass(frozen=True, kw_only=True)
class RunEvent(Mapping[str, Any]):
    kind: ClassVar[str] = "event"
    optional: ClassVar[tuple[str, ...]] = ()  # fields left out of the JSON when None
    at: str = field(default_factory=now_iso)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.kind, "at": self.at}
        for item in fields(self):
            value = getattr(self, item.name)
            if item.name in ("at", "extra") or (value is None and item.name in self.optional):
                continue
            data[item.name] = value
        return data | dict(getattr(self, "extra", None) or {})

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_dict())

    def __len__(self) -> int:
        return len(self.to_dict())

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in cls.__dict__:  # a class of its own kind (Custom's is its name, kept per event)
            KINDS.setdefault(cls.kind, cls)

    @classmethod
    def __get_pydantic_core_schema__(cls, source: Any, handler: Any) -> Any:
        """A field typed ``RunEvent`` (a stored run's events) is read by :func:`read_event`; a class of its own
        kind validates its fields as the dataclass it is."""
        if source is not RunEvent:
            return handler(source)
        from pydantic_core import core_schema

        return core_schema.no_info_plain_validator_function(read_event)


# The loop
@dataclass(frozen=True, kw_only=True)
class RunStarted(RunEvent):
    kind = "run_started"
    resumed: bool
    turn: int


@dataclass(frozen=True, kw_only=True)
class Completed(RunEvent):
    kind = "completed"
    turns: int


@dataclass(frozen=True, kw_only=True)
class AnswerTruncated(RunEvent):
    kind = "answer_truncated"
    turn: int


@dataclass(frozen=True, kw_only=True)
class Suspended(RunEvent):
    kind = "suspended"
    reason: str | None
    turn: int


@dataclass(frozen=True, kw_only=True)
class LimitReached(RunEvent):
    kind = "tool_call_limit"
    reason: str | None
    tool_calls: int


@dataclass(frozen=True, kw_only=True)
class CostLimitReached(RunEvent):
    kind = "cost_limit"
    reason: str | None
    cost_usd: float | None


@dataclass(frozen=True, kw_only=True)
class Stopped(RunEvent):
    kind = "stopped"
    by: str
    via: str
    turn: int


@dataclass(frozen=True, kw_only=True)
class Failed(RunEvent):
    kind = "failed"
    error: str  # the exception's class name: never its message (it may quote a payload)
    status_code: int | None = None


@dataclass(frozen=True, kw_only=True)
class LastAnswerFailed(RunEvent):
    kind = "last_answer_failed"
    error: str


@dataclass(frozen=True, kw_only=True)
class ContextOverflow(RunEvent):
    kind = "context_overflow"
    turn: int
    retried: bool


@dataclass(frozen=True, kw_only=True)
class ServerDescribed(RunEvent):
    kind = "server"
    server: str  # llama.cpp | vllm | lmstudio | ollama
    window: int  # the server's own window for the model (the run uses the smaller of it and ``configured``)
    source: str  # where it was read
    configured: int  # the workflow's window (model.context_window, or context.context_budget)


@dataclass(frozen=True, kw_only=True)
class EndpointAdapted(RunEvent):
    kind = "endpoint_adapted"
    change: str  # what is sent differently from now on, after the server refused a request's shape


# The context engine
@dataclass(frozen=True, kw_only=True)
class FileRead(RunEvent):
    kind = "file_read"
    optional = ("lines", "bytes")
    file: str
    tool: str
    turn: int
    lines: list[int] | None = None
    bytes: list[int] | None = None


@dataclass(frozen=True, kw_only=True)
class VirtualFile(RunEvent):
    kind = "virtual_file"
    file: str
    tokens: int
    lines: int
    source: str


@dataclass(frozen=True, kw_only=True)
class Masking(RunEvent):
    kind = "masking"
    optional = ("cache",)
    turn: int
    outputs: int
    tokens_before: int
    tokens_after: int
    cache: Mapping[str, Any] | None = None  # the estimate that the break pays (context/cache.py)


@dataclass(frozen=True, kw_only=True)
class Folding(RunEvent):
    kind = "folding"
    turn: int
    turns: int  # folded into one message of rows
    messages: int  # that it replaced
    tokens_before: int
    tokens_after: int
    cache: Mapping[str, Any]


@dataclass(frozen=True, kw_only=True)
class Compaction(RunEvent):
    kind = "compaction"
    turn: int
    number: int
    trigger: str
    tactic: str
    tokens_before: int
    tokens_after: int
    archive_file: str
    extra: Mapping[str, Any] = field(default_factory=dict)  # the tactic's details (summary usage, ladder rungs)


@dataclass(frozen=True, kw_only=True)
class CompactionReused(RunEvent):
    kind = "compaction_reused"
    key: str


@dataclass(frozen=True, kw_only=True)
class CompactionFallback(RunEvent):
    kind = "compaction_fallback"
    error: str


@dataclass(frozen=True, kw_only=True)
class Calibrated(RunEvent):
    kind = "calibration"
    optional = ("server_window", "server_prompt")
    trigger: str  # usage | overflow
    scale: float
    server_window: int | None = None
    server_prompt: int | None = None


@dataclass(frozen=True, kw_only=True)
class StatusRoleFallback(RunEvent):
    kind = "status_role_fallback"
    status_code: int | None


# Durability, continuation, progress, helpers
@dataclass(frozen=True, kw_only=True)
class MutationReplayed(RunEvent):
    kind = "mutation_replayed"
    call: str
    tool: str


@dataclass(frozen=True, kw_only=True)
class MutationUnknown(RunEvent):
    kind = "mutation_unknown"
    call: str
    tool: str


@dataclass(frozen=True, kw_only=True)
class ContinuationEnqueued(RunEvent):
    kind = "continuation_enqueued"
    continuation: int


@dataclass(frozen=True, kw_only=True)
class ContinuationRefused(RunEvent):
    kind = "continuation_refused"
    continuations: int


@dataclass(frozen=True, kw_only=True)
class ProgressUpdateFailed(RunEvent):
    kind = "progress_update_failed"


@dataclass(frozen=True, kw_only=True)
class SubagentRan(RunEvent):
    kind = "subagent"
    run_id: str
    status: str
    tool_calls: int
    tokens: int
    model: str


@dataclass(frozen=True, kw_only=True)
class SkillLoaded(RunEvent):
    """A skill's instructions joined the window (load_skill): counted per skill in the metrics."""

    kind = "skill_loaded"
    skill: str


# Approvals
@dataclass(frozen=True, kw_only=True)
class ApprovalRequested(RunEvent):
    kind = "approval_requested"
    call: str
    tool: str
    arguments_sha256: str  # the arguments themselves stay out of the record
    expires_at: float
    turn: int = 0  # the turn whose call it is (a transcript shows it there)


@dataclass(frozen=True, kw_only=True)
class ApprovalDecided(RunEvent):
    kind = "approval_decided"
    call: str
    tool: str
    decision: str  # approved | denied | expired
    by: str | None
    arguments_sha256: str
    turn: int = 0


@dataclass(frozen=True, kw_only=True)
class AwaitingApproval(RunEvent):
    kind = "awaiting_approval"
    calls: list[str]
    turn: int


# Access rules (issue 53)
@dataclass(frozen=True, kw_only=True)
class AccessDecided(RunEvent):
    """A decision of the workflow's access rules: who (``slack:U0123``), the groups they are in, the action (start,
    tool, approve), allowed or not, and the rule's reason in one line."""

    kind = "access_decided"
    optional = ("tool",)
    action: str
    allowed: bool
    who: str
    groups: list[str] = field(default_factory=list)
    reason: str = ""
    tool: str | None = None
    turn: int = 0


@dataclass(frozen=True, kw_only=True)
class ActsFor(RunEvent):
    """Who a run that no trigger started is for (``agent-runtime run``: you, ``local:<login>``, as its connections
    name you), recorded once as it starts: a triggered run's person is its trigger event's user."""

    kind = "acts_for"
    who: str


# Tools that act as the requester (issue 53): a connection asked for and what became of it (never a token)
@dataclass(frozen=True, kw_only=True)
class ConnectAsked(RunEvent):
    kind = "connect_asked"
    call: str
    tool: str
    provider: str
    person: str


@dataclass(frozen=True, kw_only=True)
class ConnectSettled(RunEvent):
    kind = "connect_settled"
    call: str
    tool: str
    provider: str
    person: str
    outcome: str  # connected | denied | expired


@dataclass(frozen=True, kw_only=True)
class Custom(RunEvent):
    """An event of a user's hook or tool: ``record.event("name", key=value)``."""

    name: str
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.name, "at": self.at, **self.extra}


# Tools disclosed progressively (toolsearch)
@dataclass(frozen=True, kw_only=True)
class ToolsFound(RunEvent):
    """A tool_search call: which deferred tools it found (their schemas joined the window), among how many
    candidates, by which stage; or a found tool called by name without a search (``stage`` "called")."""

    kind = "tools_found"
    found: list[str]
    candidates: int
    stage: str  # chooser | lexical (and why the chooser did not answer) | called
    turn: int
    tokens: int = 0  # the chooser's call


def turn_of(event: RunEvent) -> int:
    """The turn an event happened in (0: an event of no turn, such as a skill's load or a run's end)."""
    turn = getattr(event, "turn", 0)
    return turn if isinstance(turn, int) else 0


def read_event(data: object) -> RunEvent:
    """A stored event back to its class, by its ``type``. A field an earlier version did not write reads as empty
    (0, "", None, an empty list); an unknown type, or a field of another type than its class says, is kept as a
    ``Custom`` event with everything it held — never dropped. Raises ``ValueError`` for what is no event at all."""
    if isinstance(data, RunEvent):
        return data
    if not isinstance(data, Mapping):
        raise ValueError("an event is not a JSON object")
    rest = dict(data)
    name, at = rest.pop("type", ""), rest.pop("at", "")
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is not None and isinstance(at, str):
        from pydantic import ValidationError

        try:
            event: RunEvent = _adapter(kind).validate_python({**_filled(kind, rest), "at": at})
            return event
        except ValidationError:
            pass  # another version's or a damaged event of this kind: kept whole, as a generic one
    if not isinstance(at, str):
        rest, at = {"at": at, **rest}, ""
    return Custom(name=name if isinstance(name, str) else str(name), at=at, extra=rest)


@functools.cache
def _adapter(kind: type[RunEvent]) -> Any:
    from pydantic import TypeAdapter

    return TypeAdapter(kind)


def _filled(kind: type[RunEvent], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` as ``kind``'s fields: each one missing given its type's empty value; keys of no field go to the
    class's ``extra`` (a compaction's details), where it has one."""
    empty, own = _empty(kind), {item.name for item in fields(kind)}
    found = {key: value for key, value in data.items() if key in own}
    if "extra" in own:
        found["extra"] = {key: value for key, value in data.items() if key not in own}
    return {**empty, **found}


@functools.cache
def _empty(kind: type[RunEvent]) -> dict[str, Any]:
    """The empty value of each field of ``kind`` that has no default."""
    hints = typing.get_type_hints(kind)
    required = [item.name for item in fields(kind) if item.default is MISSING and item.default_factory is MISSING]
    return {name: _empty_of(hints[name]) for name in required if name != "at"}


def _empty_of(hint: Any) -> Any:
    origin = typing.get_origin(hint) or hint
    if origin in (typing.Union, types.UnionType):
        return None if type(None) in typing.get_args(hint) else _empty_of(typing.get_args(hint)[0])
    return {str: "", int: 0, float: 0.0, bool: False, list: [], tuple: ()}.get(origin, {})
