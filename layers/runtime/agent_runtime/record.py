"""What a run leaves behind: its resumable state and its record (usage, tool calls, events)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TypeVar

from .events import Custom, RunEvent, now_iso
from .ids import new_run_id as new_run_id  # one run id format for all (ids.py), here for its users
from .messages import Message
from .models.prices import Prices
from .spend.ledger import BAD_USAGE, CUT_SHORT, Ledger, usage_problem

E = TypeVar("E", bound=RunEvent)


EVAL_RUN_PREFIX = "eval-"  # an eval case's runs (evals/runner.py): runs stats leaves them out unless asked


class RunStatus(StrEnum):
    RUNNING = "running"
    COMPLETED = "completed"
    SUSPENDED = "suspended"  # deadline reached: state is consistent and resumable
    AWAITING_APPROVAL = "awaiting_approval"  # a call waits for a person's decision: resumed when it arrives
    TOOL_CALL_LIMIT = "tool_call_limit"  # limits.max_tool_calls reached
    COST_LIMIT = "cost_limit"  # limits.max_cost or max_cost_per_thread_day reached: the thread can go on
    STOPPED = "stopped"  # a person stopped it (stopping.py): its state is kept, the thread can go on
    FAILED = "failed"  # a RunError ended it


@dataclass(slots=True)
class RunState:
    """Everything needed to continue a run: plain JSON, safe to checkpoint after any step."""

    run_id: str
    workflow: str
    messages: list[Message] = field(default_factory=list)
    turn: int = 0
    tool_calls_used: int = 0
    announced_files: list[str] = field(default_factory=list)  # ids the model has been told about
    context: dict[str, Any] = field(default_factory=dict)  # the context engine's JSON state (ledger, coverage)

    def to_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "workflow": self.workflow,
            "messages": self.messages,
            "turn": self.turn,
            "tool_calls_used": self.tool_calls_used,
            "announced_files": self.announced_files,
            "context": self.context,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunState:
        return cls(
            run_id=data["run_id"],
            workflow=data["workflow"],
            messages=list(data.get("messages", [])),
            turn=int(data.get("turn", 0)),
            tool_calls_used=int(data.get("tool_calls_used", 0)),
            announced_files=list(data.get("announced_files", [])),
            context=dict(data.get("context", {})),
        )


@dataclass(slots=True)
class RunRecord:
    """The audit trail of one run (one invocation of the loop). Holds no prompt or tool payloads."""

    run_id: str
    workflow: str
    model: str
    status: RunStatus = RunStatus.RUNNING
    final_answer: str | None = None
    stop_reason: str | None = None
    started_at: str = field(default_factory=now_iso)
    ended_at: str | None = None
    model_calls: list[dict[str, Any]] = field(default_factory=list)
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    events: list[RunEvent] = field(default_factory=list)
    files: list[dict[str, Any]] = field(default_factory=list)
    children: list[dict[str, Any]] = field(default_factory=list)  # records of sub-agent runs
    prices: Prices | None = field(default=None, repr=False)  # for the cost estimate (None: unknown model)
    ledger: Ledger = field(default_factory=Ledger, repr=False, compare=False)  # the run's spend, helpers' included
    # The state to resume or continue from. Holds payloads, so it is never part of to_dict().
    state: RunState | None = field(default=None, repr=False)

    def event(self, event: RunEvent | str, **data: Any) -> None:
        """Record a typed event (``record.event(Compaction(...))``), or a hook's own: ``event("name", key=1)``."""
        self.events.append(Custom(name=event, extra=data) if isinstance(event, str) else event)

    def events_of(self, kind: type[E]) -> list[E]:
        return [event for event in self.events if isinstance(event, kind)]

    def attempts(
        self,
        turn: int,
        failures: Sequence[Mapping[str, Any]],
        *,
        estimate: Callable[[], dict[str, int]] | None = None,
        **extra: Any,
    ) -> None:
        """The failed attempts of a model call. One the server began answering and that was then cut (the run's
        deadline closed it, the stream broke) may have been billed: it is charged the prompt and what arrived,
        estimated, and marked so. One refused with an HTTP error is not."""
        for failure in failures:
            entry = {"turn": turn, **extra, **failure}
            if entry.pop("billable", False) and estimate is not None:
                usage = estimate() | {"completion_tokens": int(entry.get("received_tokens") or 0)}
                usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
                cost = None if self.prices is None else self.prices.cost(usage)
                entry |= {"usage": usage, "usage_estimated": CUT_SHORT, "cost_usd": cost}
                if cost is not None:
                    self.ledger.charge(cost, source=str(extra.get("purpose") or "run"), estimated=True)
            self.model_calls.append(entry)

    def add_call(
        self, entry: dict[str, Any], *, source: str = "run", estimate: Callable[[], dict[str, int]] | None = None
    ) -> dict[str, Any]:
        """Record a model call and charge it to the ledger at this run's prices. A call without usage, or with
        usage that is not whole non-negative numbers, is charged ``estimate()`` and marked ``usage_estimated``."""
        problem = BAD_USAGE if entry.pop("usage_invalid", False) else usage_problem(entry.get("usage"))
        if problem is not None and estimate is not None:
            entry["usage"], entry["usage_estimated"] = estimate(), problem
        cost = None if self.prices is None or (problem and estimate is None) else self.prices.cost(entry["usage"])
        entry["cost_usd"] = None if cost is None else round(cost, 8)
        self.model_calls.append(entry)
        if cost is not None:
            self.ledger.charge(cost, source=source, estimated=problem is not None)
        return entry

    def usage_totals(self) -> dict[str, int]:
        totals = {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "cached_tokens": 0}
        for call in self.model_calls:
            if usage_problem(call.get("usage")) is None:
                for key, value in call["usage"].items():
                    totals[key] = totals.get(key, 0) + int(value)
        return totals

    def cost_usd(self) -> float | None:
        """What the run has cost so far, in all its invocations: its calls (cached input at the cached rate), its
        compaction summaries and its helpers' calls. None: nothing priced (a model with no known price)."""
        total = self.ledger.total()
        return None if self.prices is None and not total else total

    def to_dict(self) -> dict[str, Any]:
        cost = self.cost_usd()
        return {
            "run_id": self.run_id,
            "workflow": self.workflow,
            "model": self.model,
            "cost_usd": None if cost is None else round(cost, 6),
            "cost": self.ledger.breakdown(),
            "status": str(self.status),
            "final_answer": self.final_answer,
            "stop_reason": self.stop_reason,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "usage": self.usage_totals(),
            "model_calls": self.model_calls,
            "tool_calls": self.tool_calls,
            "files": self.files,
            "events": [event.to_dict() for event in self.events],
            "children": self.children,
        }


def with_earlier(earlier: Mapping[str, Any] | None, later: dict[str, Any]) -> dict[str, Any]:
    """The record an invocation stores: its own ``to_dict()``, after what the run's earlier invocations stored
    (none: the run's first; the same start: this invocation's own, saved again, which it replaces)."""
    if earlier is None or earlier.get("started_at") == later["started_at"]:
        return later
    return merged_invocations(earlier, later)


def merged_invocations(earlier: Mapping[str, Any], later: Mapping[str, Any]) -> dict[str, Any]:
    """One run's stored record across its invocations (a deadline, an approval): the later one's outcome and
    ledger (its spend carries the earlier ones'), every invocation's model calls, tool calls, events, files and
    helpers, the usage summed, and the first invocation's start."""
    files = {f.get("id"): f for f in [*(earlier.get("files") or []), *(later.get("files") or [])]}
    calls = [*(earlier.get("model_calls") or []), *(later.get("model_calls") or [])]
    usage: dict[str, int] = {}
    for part in (earlier.get("usage") or {}, later.get("usage") or {}):
        for key, value in part.items():
            usage[key] = usage.get(key, 0) + int(value)
    return {
        **later,
        "started_at": earlier.get("started_at") or later.get("started_at"),
        "invocations": int(earlier.get("invocations") or 1) + 1,
        "usage": usage,
        "model_calls": calls,
        "tool_calls": [*(earlier.get("tool_calls") or []), *(later.get("tool_calls") or [])],
        "events": [*(earlier.get("events") or []), *(later.get("events") or [])],
        "files": list(files.values()),
        "children": [*(earlier.get("children") or []), *(later.get("children") or [])],
    }
