"""The stack's dashboard and alarms read the metrics the worker prints: every metric and dimension set a widget
or an alarm asks for is one ``RunMetrics`` emits for a run (a rename in either fails here), and the body is JSON."""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from typing import Any

from agent_runtime.reading.figures import Figures
from agent_runtime.service.metrics import COST_LINE, RunMetrics
from hypothesis import given, settings
from hypothesis import strategies as st

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
    for line in (line for line in lines if line.startswith('{"_aws"')):  # the cost lines are read by the log widgets
        directive = json.loads(line)["_aws"]["CloudWatchMetrics"][0]
        found |= {(frozenset(directive["Dimensions"][0]), m["Name"]) for m in directive["Metrics"]}
    return found


def dashboard() -> dict[str, Any]:
    body = TEMPLATE["Resources"]["RunsDashboard"]["Properties"]["DashboardBody"]
    return dict(json.loads(body.replace("${AWS::Region}", "eu-west-1").replace("${WorkerFunction}", "stack-Worker-1")))


def run_of(cost: float, person: str, teams: tuple[str, ...]) -> Figures:
    return Figures("ops", "slack", "completed", None, cost, 10, 8, 2, 1, 0, 1.0, None, person=person, teams=teams)


def test_every_widget_and_alarm_reads_a_metric_the_worker_emits() -> None:
    resources = TEMPLATE["Resources"]
    asked = []
    for widget in dashboard()["widgets"]:
        if widget["type"] == "log":
            continue  # read by the next test
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


def test_the_cost_by_person_and_team_widgets_read_the_lines_the_worker_prints() -> None:
    """People and teams are no dimensions (a metric each would be billed): the widgets are Logs Insights queries
    over the worker's log, filtering the lines ``RunMetrics`` prints for each run's person and teams."""
    queries = [w["properties"]["query"] for w in dashboard()["widgets"] if w["type"] == "log"]
    lines: list[str] = []
    RunMetrics(out=lines.append).ended(run_of(0.5, "slack:U0DANA", ("sre",)))
    printed = [json.loads(line) for line in lines if not line.startswith('{"_aws"')]
    scopes = set()
    for query in queries:
        found = re.fullmatch(
            r"SOURCE '/aws/lambda/stack-Worker-1' \| filter kind = '(\w+)' and scope = '(\w+)' \| "
            r"stats sum\((\w+)\) as cost_usd, count\(\*\) as runs by (\w+) \| sort cost_usd desc \| limit 100",
            query,
        )
        assert found, query
        kind, scope, value, name = found.groups()
        [line] = [line for line in printed if line["scope"] == scope]
        assert (kind, line["kind"], line[value], line[name]) == (
            COST_LINE,
            COST_LINE,
            0.5,
            dict(person="slack:U0DANA", team="sre")[scope],
        )
        scopes.add(scope)
    assert scopes == {"person", "team"}


people = st.sampled_from(["", "slack:U0DANA", "slack:U0SAM", "jira:pg-dana"])
teams = st.lists(st.sampled_from(["sre", "payments", "ops"]), max_size=3).map(tuple)
costs = st.floats(min_value=0, max_value=50, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(costs, people, teams), max_size=12))
def test_the_people_add_up_to_the_total_and_each_team_to_its_runs(
    runs: list[tuple[float, str, tuple[str, ...]]],
) -> None:
    """Summed as the widgets sum them, the person lines add up to the runs' total cost (a run for no one under
    ``(unknown)``, as ``runs stats --by person`` says) and a team's lines to the cost of the runs it had."""
    lines: list[str] = []
    metrics = RunMetrics(out=lines.append)
    for cost, person, its_teams in runs:
        metrics.ended(run_of(cost, person, its_teams))
    summed: dict[tuple[str, str], float] = defaultdict(float)
    for line in (json.loads(line) for line in lines if not line.startswith('{"_aws"')):
        summed[(line["scope"], line["name"])] += line["usd"]
    people_total = sum(v for (scope, _), v in summed.items() if scope == "person")
    assert math.isclose(people_total, sum(cost for cost, _, _ in runs), abs_tol=1e-9)
    for team in ("sre", "payments", "ops"):
        expected = sum(cost for cost, _, its_teams in runs if team in its_teams)
        assert math.isclose(summed.get(("team", team), 0.0), expected, abs_tol=1e-9)
    assert all(name != "" for _, name in summed)
