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
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..events import AccessDecided, ActsFor, ApprovalDecided, ApprovalRequested, Compaction, Failed, SkillLoaded
from ..record import RunStatus
from ..views.run import StoredRun, seconds

ENDED_WELL = ("completed",)
INTERRUPTED = "interrupted"  # a run whose process ended mid-run, as `runs list` shows it (cli/running.py)
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
    person: str = ""  # who the run was for (slack:U0123; its access decision's, else its trigger's user or ActsFor)
    teams: tuple[str, ...] = ()  # the workflow's access groups they were in when it started

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


def figures(run: StoredRun, trigger: str, requester: str = "") -> Figures:
    """The run's figures: the whole run (every invocation), its helpers' tool calls and skill loads with it.
    ``requester``: who it was for when its record does not say (a workflow without access rules)."""
    start = next((event for event in run.events_of(AccessDecided) if event.action == "start"), None)
    requester = requester or next((event.who for event in run.events_of(ActsFor)), "")  # a CLI run's
    failed = next((event.error for event in run.events_of(Failed)), None)
    tools: Counter[str] = Counter()
    skills: Counter[str] = Counter()
    for each in (run, *run.helpers):
        tools.update(OTHER if call.unknown else call.name[:100] for call in each.tool_calls)
        skills.update(event.skill[:100] for event in each.events_of(SkillLoaded))
    first = next((c.first_token_ms for c in run.model_calls if c.first_token_ms is not None), None)
    return Figures(
        workflow=run.workflow,
        trigger=trigger,
        status=run.status,
        reason=_reason(run.status, failed),
        cost=run.cost_usd or 0.0,
        tokens=run.usage.total_tokens,
        prompt_tokens=run.usage.prompt_tokens,
        cached_tokens=run.usage.cached_tokens,
        model_calls=len(run.model_calls),
        compactions=len(run.events_of(Compaction)),
        duration_s=run.duration_s,
        first_token_ms=first,
        tools=tools,
        tool_errors=sum(call.is_error for each in (run, *run.helpers) for call in each.tool_calls),
        skills=skills,
        approvals=len(run.events_of(ApprovalRequested)),
        approval_waits=tuple(_waits(run)),
        person=start.who if start is not None else requester,
        teams=tuple(start.groups) if start is not None else (),
    )


def requester_of(source: str, user: str) -> str:
    """Who a run was for when its record does not say (no access rules): its trigger's user, named by its source
    (``slack:U0123``), as access decisions name people."""
    return user if not user or user.startswith(f"{source}:") else f"{source}:{user}"


def _reason(status: str, failed: str | None) -> str | None:
    """Why the run did not complete: its status, with the error's class for a failure (None: it completed)."""
    if status in ENDED_WELL:
        return None
    if status not in RunStatus.__members__.values() and status != INTERRUPTED:
        return OTHER
    return status if not failed else f"{status}:{failed if _ERROR_CLASS.fullmatch(failed) else OTHER}"


def _waits(run: StoredRun) -> Iterator[float]:
    """Seconds from each approval request to its decision."""
    asked = {event.call: event.at for event in run.events_of(ApprovalRequested)}
    for event in run.events_of(ApprovalDecided):
        if event.call in asked and (wait := seconds(asked[event.call], event.at)) is not None:
            yield wait
