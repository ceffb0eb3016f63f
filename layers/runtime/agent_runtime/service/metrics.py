"""Each finished run's figures as CloudWatch metrics: embedded metric format lines (Powertools), printed to the
function's log, where CloudWatch extracts them — no API call, nothing on the run's path but a print.

Namespace ``AgentRuntime``, every metric with ``service=agent-runtime`` and the run's ``workflow``:

* with ``trigger`` (slack, jira, webhook, schedule, api): Runs, RunFailures (0 or 1: its average is the failure
  rate), CostUSD, Tokens, CachedTokens, CachedShare (percent), ModelCalls, ToolCalls, ToolErrors, Compactions,
  Duration (s), TimeToFirstToken (ms), ApprovalsAsked, ApprovalWait (s, one value per decision);
* alone (for the stack's alarms): Runs, RunFailures, CostUSD;
* with ``reason`` (completed runs have none): RunFailures by why the run ended (``failed:ModelError``, ``stopped``);
* with ``tool``: ToolCalls by tool; with ``skill``: SkillLoads by skill; FeedbackGood/FeedbackBad as ratings come.

Who a run was for is no dimension (CloudWatch would bill a metric per person): a plain JSON line per run for its
person and one per access group (team) it ran as — ``{"kind": "run_cost", "scope": "person", "name": "slack:U0123",
"workflow": ..., "usd": ...}`` — which the dashboard's Logs Insights widgets add up by person and by team.

Within EMF's and CloudWatch's limits for any run: at most 99 values of a metric per line (Powertools prints and
empties its set at 100, so one more line carries the rest: a run with 350 approval waits prints four), dimension
values printable ASCII of 1 to 255 characters, only the run's own names as values (a name the run did not declare,
or one CloudWatch would refuse, counts under ``other``: figures.py), finite numbers only.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable, Mapping

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from ..reading.figures import OTHER, Figures
from .progress import TOOL_NAME

NAMESPACE = "AgentRuntime"
SERVICE = "agent-runtime"
MAX_NAMED = 30  # tools or skills with a metric of their own per run (CloudWatch bills each dimension set)
MAX_VALUES = 99  # of one metric in one line: Powertools flushes (prints, then empties its set) at 100
MAX_LABEL = 255  # characters of a dimension value (CloudWatch takes 1,024; a dashboard reads far fewer)
LARGEST = 2.0**360  # CloudWatch rejects values beyond ±2^360, and NaN and infinities
UNKNOWN = "(unknown)"  # the person of a run for no one (runs stats --by person's name for it)
COST_LINE = "run_cost"  # the kind of the lines the dashboard's cost-by-person and cost-by-team widgets read

Values = Mapping[str, tuple[list[float], str]]  # metric name → (its values, its unit)


class RunMetrics:
    def __init__(self, out: Callable[[str], None] = print, namespace: str = NAMESPACE) -> None:
        self.out, self.namespace = out, namespace

    def ended(self, run: Figures) -> None:
        workflow = label(run.workflow)
        self._emit({"workflow": workflow, "trigger": label(run.trigger)}, _run_values(run))
        failed = 0.0 if run.reason is None else 1.0
        self._emit(
            {"workflow": workflow},
            {"Runs": ([1.0], "Count"), "RunFailures": ([failed], "Count"), "CostUSD": ([run.cost], "None")},
        )
        if run.reason is not None:
            self._emit({"workflow": workflow, "reason": label(run.reason)}, {"RunFailures": ([1.0], "Count")})
        for tool, count in _named(run.tools, lambda name: TOOL_NAME.fullmatch(name) is not None).items():
            self._emit({"workflow": workflow, "tool": tool}, {"ToolCalls": ([float(count)], "Count")})
        for skill, count in _named(run.skills).items():
            self._emit({"workflow": workflow, "skill": skill}, {"SkillLoads": ([float(count)], "Count")})
        self._costs(run, workflow)

    def _costs(self, run: Figures, workflow: str) -> None:
        """The run's cost for whom it was: a line for its person (``(unknown)`` for a run for no one, as ``runs stats
        --by person`` says: the people add up to the total), one per team (a run counts for each of its teams, as
        their budgets do). A cost CloudWatch could not read prints nothing."""
        if not (math.isfinite(run.cost) and abs(run.cost) <= LARGEST):
            return
        scopes = [("person", run.person or UNKNOWN), *(("team", team) for team in dict.fromkeys(run.teams))]
        for scope, name in scopes:
            line = {"kind": COST_LINE, "scope": scope, "name": label(name), "workflow": workflow, "usd": run.cost}
            self.out(json.dumps(line, separators=(",", ":")))

    def rated(self, workflow: str, verdict: str) -> None:
        good = 1.0 if verdict == "good" else 0.0
        values = {"FeedbackGood": ([good], "Count"), "FeedbackBad": ([1.0 - good], "Count")}
        self._emit({"workflow": label(workflow)}, values)

    def _emit(self, dimensions: Mapping[str, str], values: Values) -> None:
        """One line per MAX_VALUES values of the longest metric; the others' values in the first."""
        finite = {
            name: ([v for v in vs if math.isfinite(v) and abs(v) <= LARGEST], unit)
            for name, (vs, unit) in values.items()
        }
        longest = max((len(vs) for vs, _ in finite.values()), default=0)
        for start in range(0, longest, MAX_VALUES):
            metrics = EphemeralMetrics(namespace=self.namespace, service=SERVICE)
            for key, value in dimensions.items():
                metrics.add_dimension(key, value)
            for name, (vs, unit) in finite.items():
                for one in vs[start : start + MAX_VALUES]:
                    metrics.add_metric(name, MetricUnit(unit), one)
            self.out(json.dumps(metrics.serialize_metric_set(), separators=(",", ":")))


def label(name: str) -> str:
    """A dimension value CloudWatch takes (printable ASCII, not blank, at most MAX_LABEL characters), else ``other``."""
    fits = 0 < len(name) <= MAX_LABEL and name.isascii() and name.isprintable() and not name.isspace()
    return name if fits else OTHER


def _named(counts: Counter[str], fits: Callable[[str], bool] = lambda name: True) -> Counter[str]:
    """The most used names with a metric each; the rest, and any a dimension cannot carry, under ``other``."""
    named: Counter[str] = Counter()
    for rank, (name, count) in enumerate(counts.most_common()):
        named[label(name) if rank < MAX_NAMED and fits(name) else OTHER] += count
    return named


def _run_values(run: Figures) -> dict[str, tuple[list[float], str]]:
    values: dict[str, tuple[list[float], str]] = {
        "Runs": ([1.0], "Count"),
        "RunFailures": ([0.0 if run.reason is None else 1.0], "Count"),
        "CostUSD": ([run.cost], "None"),
        "Tokens": ([float(run.tokens)], "Count"),
        "CachedTokens": ([float(run.cached_tokens)], "Count"),
        "CachedShare": ([100 * run.cached_share], "Percent"),
        "ModelCalls": ([float(run.model_calls)], "Count"),
        "ToolCalls": ([float(sum(run.tools.values()))], "Count"),
        "ToolErrors": ([float(run.tool_errors)], "Count"),
        "Compactions": ([float(run.compactions)], "Count"),
        "ApprovalsAsked": ([float(run.approvals)], "Count"),
    }
    if run.duration_s is not None:
        values["Duration"] = ([run.duration_s], "Seconds")
    if run.first_token_ms is not None:
        values["TimeToFirstToken"] = ([run.first_token_ms], "Milliseconds")
    if run.approval_waits:
        values["ApprovalWait"] = (list(run.approval_waits), "Seconds")
    return values
