"""A run's figures, read from its record: what the worker's metrics emit per run and ``runs stats`` adds up.

One reading for both, so the dashboard and the command line never disagree on what a failure, a cost or a cached
share is. Helpers count with their run (their tool calls and skill loads are the run's work).

Names are the run's own, never a model's: a call to a tool the run did not have (the record marks it ``unknown``)
counts under ``other``, and so does a reason that is not a status with an error class's name. The metrics make
each name a CloudWatch dimension (a metric billed of its own), so a model inventing 29 tool names, or an e-mail
address as one, must not create 29 metrics."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from .record import RunStatus

ENDED_WELL = ("completed",)
OTHER = "other"  # every name the run did not declare: an invented tool, an unreadable reason
_ERROR_CLASS = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")  # what type(error).__name__ gives (the code's, not a model's)


@dataclass(frozen=True)
class Figures:
    workflow: str
    trigger: str  # where the run came from: slack, jira, webhook, schedule, api, cli
    status: str
    reason: str | None  # why it did not complete: its status, and the error's class for a failure
    cost: float
    tokens: int
    prompt_tokens: int
    cached_tokens: int
    model_calls: int
    compactions: int
    duration_s: float | None
    first_token_ms: float | None  # the first model call's first streamed token
    tools: Counter[str] = field(default_factory=Counter)
    tool_errors: int = 0
    skills: Counter[str] = field(default_factory=Counter)
    approvals: int = 0
    approval_waits: tuple[float, ...] = ()  # seconds from each request to its decision

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def figures(record: Mapping[str, Any], trigger: str) -> Figures:
    usage, calls, events = record.get("usage") or {}, record.get("model_calls") or [], record.get("events") or []
    status = str(record.get("status"))
    failed = next((str(e.get("error")) for e in events if e.get("type") == "failed"), None)
    tools: Counter[str] = Counter()
    skills: Counter[str] = Counter()
    errors = 0
    for run in _runs(record):
        for call in run.get("tool_calls") or []:
            tools[OTHER if call.get("unknown") else str(call.get("name"))[:100]] += 1
            errors += bool(call.get("is_error"))
        skills.update(str(e.get("skill"))[:100] for e in run.get("events") or [] if e.get("type") == "skill_loaded")
    first = next((c.get("first_token_ms") for c in calls if c.get("first_token_ms") is not None), None)
    return Figures(
        workflow=str(record.get("workflow")),
        trigger=trigger,
        status=status,
        reason=_reason(status, failed),
        cost=float(record.get("cost_usd") or 0.0),
        tokens=int(usage.get("total_tokens") or 0),
        prompt_tokens=int(usage.get("prompt_tokens") or 0),
        cached_tokens=int(usage.get("cached_tokens") or 0),
        model_calls=len(calls),
        compactions=sum(1 for e in events if e.get("type") == "compaction"),
        duration_s=seconds(record.get("started_at"), record.get("ended_at")),
        first_token_ms=float(first) if first is not None else None,
        tools=tools,
        tool_errors=errors,
        skills=skills,
        approvals=sum(1 for e in events if e.get("type") == "approval_requested"),
        approval_waits=tuple(_waits(events)),
    )


def _reason(status: str, failed: str | None) -> str | None:
    """Why the run did not complete: its status, with the error's class for a failure (None: it completed)."""
    if status in ENDED_WELL:
        return None
    if status not in RunStatus.__members__.values():
        return OTHER
    return status if not failed else f"{status}:{failed if _ERROR_CLASS.fullmatch(failed) else OTHER}"


def _runs(record: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """The run, then its helpers (theirs too)."""
    queue = [record]
    while queue:
        run = queue.pop()
        yield run
        queue.extend(run.get("children") or [])


def _waits(events: list[Mapping[str, Any]]) -> Iterator[float]:
    asked = {e.get("call"): e.get("at") for e in events if e.get("type") == "approval_requested"}
    for event in events:
        if event.get("type") == "approval_decided" and event.get("call") in asked:
            wait = seconds(asked[event.get("call")], event.get("at"))
            if wait is not None:
                yield wait


def seconds(start: Any, end: Any) -> float | None:
    """From one ISO time to another (a record's, an event's); None when either is absent or unreadable."""
    try:
        return max(0.0, (datetime.fromisoformat(str(end)) - datetime.fromisoformat(str(start))).total_seconds())
    except (ValueError, TypeError):  # absent, or one with a zone and one without
        return None
