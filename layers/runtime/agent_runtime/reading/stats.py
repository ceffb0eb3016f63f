"""``agent-runtime runs stats``: the figures the worker's metrics carry, added up from the store for a period —
per workflow and trigger (runs, failures, cost, tokens, cached share, first token, duration, tool calls,
approvals and their wait, ratings), then failures by reason, tool calls by tool and skill loads by skill."""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .. import inert
from ..errors import ConfigError
from ..record import EVAL_RUN_PREFIX, RunStatus
from ..stores import RunStore
from ..stores.exceptions import StoreError
from ..views import read_run
from ..views.parsing import Unreadable
from ..views.rows import Rating
from .figures import Figures, figures, requester_of

Unended = Callable[[str], dict[str, Any] | None]  # a run with no record yet, as `runs list` shows it (None: at work)
_SPAN = re.compile(r"([0-9]+)([mhdw])")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def since(text: str, now: datetime) -> datetime:
    """``7d``, ``24h``, ``30m``, ``2w`` before ``now``, or a date/time (``2026-11-01``, ISO; UTC unless it says).
    A period no run can be in (before year 1, in the future) is refused with the reason, as is anything else."""
    start = _start(text.strip(), now)
    if start > now:
        raise ConfigError(f"--since {text!r} is in the future: no run has started there yet")
    return start


def _start(text: str, now: datetime) -> datetime:
    found = _SPAN.fullmatch(text)
    try:
        if found is None:
            return _utc(datetime.fromisoformat(text))
        amount = found.group(1).lstrip("0") or "0"
        if len(amount) > 12:  # more than a trillion of anything: before year 1 (int() would refuse 4,300 digits)
            raise OverflowError
        return now - timedelta(**{_UNITS[found.group(2)]: int(amount)})
    except OverflowError:
        raise ConfigError(f"--since {text!r} reaches back before year 1: give a shorter span or a date") from None
    except ValueError:
        raise ConfigError(f"--since {text!r}: give a span (7d, 24h, 30m, 2w) or a date (2026-11-01)") from None


def started(when: str) -> datetime:
    """When a run started, as the runs index names it; one with no readable time reads as the latest (counted,
    never the reason to stop reading newest first)."""
    try:
        return _utc(datetime.fromisoformat(when))
    except ValueError:
        return datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True)
class Gathered:
    """The runs of a period with their ratings, how many could not be read, and whether ``limit`` left some out."""

    runs: list[tuple[Figures, tuple[Rating, ...]]]
    unreadable: int = 0
    limited: bool = False
    evals_left_out: int = 0  # an eval's runs of the period, not counted (``evals``: counted, as trigger eval)

    def notes(self, limit: int | None) -> list[str]:
        """What the figures leave out, a line each: runs past ``limit``, unreadable records, eval cases' runs."""
        said = [
            (self.limited, f"only the newest {limit} (--limit): the period has more"),
            (
                self.unreadable,
                f"{self.unreadable} run(s) could not be read (their records are damaged or gone): not counted",
            ),
            (self.evals_left_out, f"{self.evals_left_out} run(s) of eval cases left out (--evals counts them)"),
        ]
        return [line for due, line in said if due]


def gather(
    runs: RunStore,
    start: datetime,
    *,
    workflow: str | None = None,
    limit: int | None = None,
    evals: bool = False,
    unended: Unended = lambda run_id: None,
) -> Gathered:
    """Every run that started since ``start``, newest first, to the period's first (``limit``: the newest N only,
    and said). A run whose record cannot be read is counted as such, and the report goes on. An eval's runs are
    tests, not the workflows' work (their failures are often meant): left out and counted, unless ``evals``. A run
    with no record yet is counted as ``unended`` reads it (a process killed mid-run: interrupted, with what it did
    by its last checkpoint), or left out while it works: neither is damaged."""
    found: list[tuple[Figures, tuple[Rating, ...]]] = []
    unreadable = left_out = 0
    for run_id, when in runs.started():
        if started(when) < start:
            break
        if run_id.startswith(EVAL_RUN_PREFIX) and not evals:
            left_out += 1
            continue
        try:
            run = _read(runs, run_id, workflow, unended)
        except (StoreError, Unreadable):  # the item unreadable, or a record that does not read as a run
            unreadable += 1
            continue
        if run is not None and limit is not None and len(found) >= limit:  # one more of the period: say so
            return Gathered(found, unreadable, limited=True, evals_left_out=left_out)
        found += [run] if run is not None else []
    return Gathered(found, unreadable, evals_left_out=left_out)


def _read(
    runs: RunStore, run_id: str, workflow: str | None, unended: Unended
) -> tuple[Figures, tuple[Rating, ...]] | None:
    """A run's figures and ratings (None: another workflow's, or one at work); ``StoreError`` for a record that
    cannot be read."""
    run = runs.load_run(run_id)
    if run is None and (so_far := unended(run_id)) is not None:
        run = read_run(so_far)
    elif run is None and (row := runs.summary(run_id)) is not None and row.status == RunStatus.RUNNING:
        return None  # at work: its figures come with its record
    if run is None:  # listed, but its record gone: unreadable too (they are written and expire together)
        raise StoreError(f"run {run_id}: no record")
    if workflow and run.workflow != workflow:
        return None
    event = runs.load_event(run_id)
    if event is None:
        return figures(run, "eval" if run_id.startswith(EVAL_RUN_PREFIX) else "cli"), run.feedback
    return figures(run, event.source, requester_of(event.source, event.user)), run.feedback


def _utc(moment: datetime) -> datetime:
    """A time with no zone is UTC's (the records' times, a date typed at the prompt)."""
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


@dataclass
class Group:
    """The runs of one workflow from one trigger."""

    runs: int = 0
    failures: int = 0  # runs that did not complete, but for a person's stop
    stopped: int = 0  # runs a person stopped: no failure of the run's
    cost: float = 0.0
    tokens: int = 0
    prompt: int = 0
    cached: int = 0
    tool_calls: int = 0
    approvals: int = 0
    good: int = 0
    bad: int = 0
    first_tokens: list[float] = field(default_factory=list)
    durations: list[float] = field(default_factory=list)
    waits: list[float] = field(default_factory=list)

    def add(self, run: Figures, ratings: Sequence[Rating]) -> None:
        self.runs += 1
        self.stopped += run.status == STOPPED
        self.failures += run.reason is not None and run.status != STOPPED
        self.cost += run.cost
        self.tokens, self.prompt, self.cached = (
            self.tokens + run.tokens,
            self.prompt + run.prompt_tokens,
            (self.cached + run.cached_tokens),
        )
        self.tool_calls += sum(run.tools.values())
        self.approvals += run.approvals
        self.waits += run.approval_waits
        self.first_tokens += [run.first_token_ms] if run.first_token_ms is not None else []
        self.durations += [run.duration_s] if run.duration_s is not None else []
        verdicts = [rating.verdict for rating in ratings]
        self.good, self.bad = self.good + verdicts.count("good"), self.bad + verdicts.count("bad")

    def row(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "failures": self.failures,
            "failure_rate": round(self.failures / self.runs, 4),
            "stopped": self.stopped,
            "cost_usd": round(self.cost, 6),
            "tokens": self.tokens,
            "cached_share": round(self.cached / self.prompt, 4) if self.prompt else 0.0,
            "first_token_ms_p50": _median(self.first_tokens),
            "duration_s_p50": _median(self.durations),
            "tool_calls": self.tool_calls,
            "approvals": self.approvals,
            "approval_wait_s_p50": _median(self.waits),
            "feedback": {"good": self.good, "bad": self.bad},
        }


STOPPED = "stopped"  # a person's stop ends a run on purpose: counted apart from the failures
BY = ("person", "team", "workflow")  # runs stats --by: cost and the rest per requester, access group, workflow
NO_TEAM = "(no team)"


def _keys(run: Figures, by: str | None) -> list[tuple[str, ...]]:
    """The groups a run counts in: its workflow and trigger; by person, its requester; by team, each of its
    access groups (a run in two counts in both; one in none under ``(no team)``); by workflow, its workflow."""
    if by == "person":
        return [(run.person or "(unknown)",)]
    if by == "team":
        return [(team,) for team in run.teams] or [(NO_TEAM,)]
    if by == "workflow":
        return [(run.workflow,)]
    return [(run.workflow, run.trigger)]


def add_up(runs: Iterable[tuple[Figures, Sequence[Rating]]], by: str | None = None) -> dict[str, Any]:
    """Runs with their ratings → the report ``runs stats --json`` prints (``by``: one group per person, team or
    workflow instead of per workflow and trigger)."""
    groups: dict[tuple[str, ...], Group] = defaultdict(Group)
    reasons, tools, skills = Counter[str](), Counter[str](), Counter[str]()
    total = stopped = 0
    for run, ratings in runs:
        total += 1
        for key in _keys(run, by):
            groups[key].add(run, ratings)
        reasons.update([run.reason] if run.reason and run.status != STOPPED else [])
        stopped += run.status == STOPPED
        tools.update(run.tools)
        skills.update(run.skills)
    names = (by,) if by else ("workflow", "trigger")
    rows = [dict(zip(names, key, strict=True)) | g.row() for key, g in sorted(groups.items())]
    return {
        "runs": total,
        "by": by,
        "groups": rows,
        "stopped": stopped,
        "failures_by_reason": dict(reasons.most_common()),
        "tool_calls_by_tool": dict(tools.most_common()),
        "skill_loads_by_skill": dict(skills.most_common()),
    }


def table(report: Mapping[str, Any]) -> str:
    """The report for a terminal: every name (workflow, trigger, person, team, reason, tool, skill) cut, then made
    inert."""
    by = report["by"]
    first, second = (str(by), "") if by else ("workflow", "trigger")
    head = f"{first:<24} {second:<9} {'runs':>5} {'failed':>7} {'stopped':>7} {'cost':>10} {'tokens':>10} "
    head += f"{'cached':>7} {'1st token':>10} {'duration':>9} {'tools':>6} {'approvals':>10} {'good/bad':>9}"
    lines = [head]
    for row in report["groups"]:
        wait = f" ({row['approval_wait_s_p50']:.0f}s)" if row["approval_wait_s_p50"] is not None else ""
        cost = f"${row['cost_usd']:.4f}"
        workflow = inert.terminal(str(row[first])[:24])
        trigger = inert.terminal(str(row[second])[:9]) if second else ""
        lines.append(
            f"{workflow:<24} {trigger:<9} {row['runs']:>5} "
            f"{row['failures']:>3} {row['failure_rate']:>3.0%} {row['stopped']:>7} {cost:>10} {row['tokens']:>10,} "
            f"{row['cached_share']:>7.0%} {_ms(row['first_token_ms_p50']):>10} {_s(row['duration_s_p50']):>9} "
            f"{row['tool_calls']:>6} {str(row['approvals']) + wait:>10} "
            f"{row['feedback']['good']:>4}/{row['feedback']['bad']:<4}"
        )
    for title, key in (
        ("failures by reason", "failures_by_reason"),
        ("tool calls by tool", "tool_calls_by_tool"),
        ("skill loads by skill", "skill_loads_by_skill"),
    ):
        counts = report[key]
        if counts:
            named = ", ".join(f"{inert.terminal(str(name)[:200])} {count}" for name, count in list(counts.items())[:20])
            lines.append(f"{title}: {named}")
    return "\n".join(lines)


def _median(values: list[float]) -> float | None:
    return round(statistics.median(values), 1) if values else None


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f} s"
