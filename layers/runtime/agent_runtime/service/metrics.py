"""Each finished run's figures as CloudWatch metrics: embedded metric format lines (Powertools), printed to the
function's log, where CloudWatch extracts them — no API call, nothing on the run's path but a print.

Namespace ``AgentRuntime``, every metric with ``service=agent-runtime`` and the run's ``workflow``:

* with ``trigger`` (slack, jira, webhook, schedule, api): Runs, RunFailures (0 or 1: its average is the failure
  rate), CostUSD, Tokens, CachedTokens, CachedShare (percent), ModelCalls, ToolCalls, ToolErrors, Compactions,
  Duration (s), TimeToFirstToken (ms), ApprovalsAsked, ApprovalWait (s, one value per decision);
* alone (for the stack's alarms): Runs, RunFailures, CostUSD;
* with ``reason`` (completed runs have none): RunFailures by why the run ended (``failed:ModelError``, ``stopped``);
* with ``tool``: ToolCalls by tool; with ``skill``: SkillLoads by skill; FeedbackGood/FeedbackBad as ratings come.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from aws_lambda_powertools.metrics import EphemeralMetrics, MetricUnit

from ..figures import Figures

NAMESPACE = "AgentRuntime"
SERVICE = "agent-runtime"
MAX_NAMED = 30  # tools or skills with a metric of their own per run (CloudWatch bills each dimension set)


class RunMetrics:
    def __init__(self, out: Callable[[str], None] = print, namespace: str = NAMESPACE) -> None:
        self.out, self.namespace = out, namespace

    def ended(self, run: Figures) -> None:
        self._emit({"workflow": run.workflow, "trigger": run.trigger}, _run_values(run))
        failed = 0.0 if run.reason is None else 1.0
        self._emit({"workflow": run.workflow}, {"Runs": (1.0, "Count"), "RunFailures": (failed, "Count"),
                                                "CostUSD": (run.cost, "None")})  # fmt: skip
        if run.reason is not None:
            self._emit({"workflow": run.workflow, "reason": run.reason[:200]}, {"RunFailures": (1.0, "Count")})
        for tool, count in run.tools.most_common(MAX_NAMED):
            self._emit({"workflow": run.workflow, "tool": tool}, {"ToolCalls": (float(count), "Count")})
        for skill, count in run.skills.most_common(MAX_NAMED):
            self._emit({"workflow": run.workflow, "skill": skill}, {"SkillLoads": (float(count), "Count")})

    def rated(self, workflow: str, verdict: str) -> None:
        good = 1.0 if verdict == "good" else 0.0
        self._emit({"workflow": workflow}, {"FeedbackGood": (good, "Count"), "FeedbackBad": (1.0 - good, "Count")})

    def _emit(self, dimensions: Mapping[str, str], values: Mapping[str, tuple[float | list[float], str]]) -> None:
        metrics = EphemeralMetrics(namespace=self.namespace, service=SERVICE)
        for key, label in dimensions.items():
            metrics.add_dimension(key, label or "-")
        for name, (value, unit) in values.items():
            for one in value if isinstance(value, list) else [value]:
                metrics.add_metric(name, MetricUnit(unit), one)
        self.out(json.dumps(metrics.serialize_metric_set(), separators=(",", ":")))


def _run_values(run: Figures) -> dict[str, tuple[float | list[float], str]]:
    values: dict[str, tuple[float | list[float], str]] = {
        "Runs": (1.0, "Count"),
        "RunFailures": (0.0 if run.reason is None else 1.0, "Count"),
        "CostUSD": (run.cost, "None"),
        "Tokens": (float(run.tokens), "Count"),
        "CachedTokens": (float(run.cached_tokens), "Count"),
        "CachedShare": (100 * run.cached_share, "Percent"),
        "ModelCalls": (float(run.model_calls), "Count"),
        "ToolCalls": (float(sum(run.tools.values())), "Count"),
        "ToolErrors": (float(run.tool_errors), "Count"),
        "Compactions": (float(run.compactions), "Count"),
        "ApprovalsAsked": (float(run.approvals), "Count"),
    }
    if run.duration_s is not None:
        values["Duration"] = (run.duration_s, "Seconds")
    if run.first_token_ms is not None:
        values["TimeToFirstToken"] = (run.first_token_ms, "Milliseconds")
    if run.approval_waits:
        values["ApprovalWait"] = (list(run.approval_waits), "Seconds")
    return values
