"""The stack's dashboard and alarms read the metrics the worker prints: every metric and dimension set a widget
or an alarm asks for is one ``RunMetrics`` emits for a run (a rename in either fails here), and the body is JSON."""

from __future__ import annotations

import json
import re
from collections import Counter

from agent_runtime.figures import Figures
from agent_runtime.service.metrics import RunMetrics

from tests.template_support import TEMPLATE


def emitted() -> set[tuple[frozenset[str], str]]:
    """(dimension names, metric name) of everything a run with tools, skills, approvals and a failure emits."""
    lines: list[str] = []
    run = Figures("ops", "slack", "failed", "failed:ModelError", 0.1, 10, 8, 2, 1, 0, 1.0, 50.0,
                  Counter({"restart": 1}), 0, Counter({"runbooks": 1}), 1, (3.0,))  # fmt: skip
    metrics = RunMetrics(out=lines.append)
    metrics.ended(run)
    metrics.rated("ops", "good")
    found = set()
    for line in lines:
        directive = json.loads(line)["_aws"]["CloudWatchMetrics"][0]
        found |= {(frozenset(directive["Dimensions"][0]), m["Name"]) for m in directive["Metrics"]}
    return found


def test_every_widget_and_alarm_reads_a_metric_the_worker_emits() -> None:
    resources = TEMPLATE["Resources"]
    body = json.loads(resources["RunsDashboard"]["Properties"]["DashboardBody"].replace("${AWS::Region}", "eu-west-1"))
    asked = []
    for widget in body["widgets"]:
        for [metric] in widget["properties"]["metrics"]:
            found = re.fullmatch(r"SEARCH\('\{AgentRuntime,([a-z,]+)\} MetricName=\"(\w+)\"', '\w+', \d+\)",
                                 metric["expression"])  # fmt: skip
            assert found, metric["expression"]
            asked.append((frozenset(found.group(1).split(",")), found.group(2)))
    for name in ("WorkflowFailureRateAlarm", "WorkflowSpendAlarm"):
        [query] = resources[name]["Properties"]["Metrics"]
        found = re.search(r'SELECT \w+\((\w+)\) FROM SCHEMA\("AgentRuntime", ([a-z, ]+)\)', query["Expression"])
        assert found, query["Expression"]
        asked.append((frozenset(d.strip() for d in found.group(2).split(",")), found.group(1)))
    assert len(asked) >= 14 and set(asked) <= emitted()
