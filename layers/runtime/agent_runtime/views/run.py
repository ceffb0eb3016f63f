"""A finished run as its readers see it: one typed value (``StoredRun``) parsed once from the record the store
holds — the whole run, every invocation of it merged (``record.merged_invocations``) — with its ratings.

Its model calls, tool calls and files are typed; its events come back to their ``events.py`` classes through the
one registry keyed by their stored ``type`` (an unknown one kept as a ``Custom`` event); its helpers are
``StoredRun``s too, walked one way (:attr:`StoredRun.helpers`); its duration is computed here, once. A record an
earlier version wrote reads the same (a field it did not write takes its default); one that does not read as a
run raises ``Unreadable`` and says where. ``runs show``, the chart, the figures (metrics, ``runs stats``), the
page, the runs channel's line and ``eval add --from-run`` all read this value, never the stored JSON."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from ..events import RunEvent
from .parsing import parsed, redacted
from .rows import Rating

if TYPE_CHECKING:
    from ..record import RunRecord
    from ..stores import RunStore

E = TypeVar("E", bound=RunEvent)


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True)
class Window:
    """What a model call's request was made of, by part, against the window (the chart draws these)."""

    split: Mapping[str, int] | None = None  # tokens by part (system, tools, summary, files inline, history)
    usable: int = 0
    compaction_at: int = 0

    def tokens(self, part: str) -> int:
        return int((self.split or {}).get(part) or 0)


@dataclass(frozen=True)
class ModelCall:
    """A model call (or a failed attempt at one: ``outcome`` failed) as the record keeps it: no payload."""

    turn: int = 0
    model: str | None = None
    purpose: str | None = None  # compaction: a summary's call
    outcome: str | None = None  # failed: an attempt that was retried or ended the run
    usage: Usage | None = None
    usage_estimated: str | None = None  # why the usage is an estimate (none reported, not valid, cut short)
    cost_usd: float | None = None
    latency_ms: float | None = None
    first_token_ms: float | None = None
    context: Window | None = None


@dataclass(frozen=True)
class ToolCall:
    turn: int = 0
    id: str = ""
    name: str = ""  # as the model wrote it (``unknown``: no tool of the run has it)
    is_error: bool = False
    executed: bool = True  # False: answered without running (refused past the cap, denied, replayed)
    mutating: bool = False
    unknown: bool = False
    refused: str | None = None
    duration_ms: float | None = None


@dataclass(frozen=True)
class FileEntry:
    id: str = ""
    name: str = ""
    mimetype: str = ""
    size_bytes: int = 0
    source: str = ""  # attachment | virtual | extracted | archive


@dataclass(frozen=True)
class StoredRun:
    """A run's record read back: what it did, what it cost, its helpers and the ratings of its answer."""

    run_id: str = ""
    workflow: str = ""
    model: str = ""
    status: str = ""
    final_answer: str | None = None
    stop_reason: str | None = None
    started_at: str | None = None  # its first invocation's start
    ended_at: str | None = None  # its last invocation's end
    cost_usd: float | None = None  # everything the run caused: its calls, compaction summaries, helpers
    cost: Mapping[str, float] = field(default_factory=dict)  # by source (run, compaction, helpers), and total
    usage: Usage = field(default_factory=Usage)
    invocations: int = 1
    model_calls: tuple[ModelCall, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    files: tuple[FileEntry, ...] = ()
    events: tuple[RunEvent, ...] = ()
    children: tuple[StoredRun, ...] = ()  # the helpers it started, each with its own
    feedback: tuple[Rating, ...] = ()  # ratings of its answer (a helper's: none)

    @cached_property
    def helpers(self) -> tuple[StoredRun, ...]:
        """Every helper the run started, depth first: a helper's own helpers follow it."""
        return tuple(run for child in self.children for run in (child, *child.helpers))

    @cached_property
    def duration_s(self) -> float | None:
        """From its first invocation's start to its last's end (None: not ended, or a time unreadable)."""
        return seconds(self.started_at, self.ended_at)

    @property
    def helpers_cost(self) -> float:
        return float(self.cost.get("helpers") or 0.0)

    def events_of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]

    def redacted(self, redact: Callable[[str], str]) -> StoredRun:
        """The run with every text in it redacted whole (before any reader cuts it)."""
        return redacted(self, redact)


def read_run(data: object) -> StoredRun:
    """The stored record (``RunStore.load_record``, ratings as ``feedback``) as a ``StoredRun``."""
    return parsed(StoredRun, data, "the run's record")


def whole_run(runs: RunStore, record: RunRecord, unread: Callable[[Exception], None] = lambda error: None) -> StoredRun:
    """The whole run as the store holds it (every invocation), or this invocation's record when the store has none
    or cannot be read (``unread`` is told why: its figures are still worth reporting). No ratings: a run that has
    just ended has none."""
    try:
        stored = runs.load_run(record.run_id, feedback=False)
    except Exception as error:  # the store unreadable, the record damaged: this invocation's own record stands in
        unread(error)
        stored = None
    return stored if stored is not None else read_run(record.to_dict())


def seconds(start: Any, end: Any) -> float | None:
    """From one ISO time to another (a record's, an event's); None when either is absent or unreadable."""
    try:
        return max(0.0, (datetime.fromisoformat(str(end)) - datetime.fromisoformat(str(start))).total_seconds())
    except (ValueError, TypeError):  # absent, or one with a zone and one without
        return None
