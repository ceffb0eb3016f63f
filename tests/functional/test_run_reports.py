"""A finished run's reports under hostile runs: any number of approval waits (Powertools prints and empties its set
at 100 values of a metric), any tool name a model writes (invented, huge, e-mail-like), any status and error.

The invariant, over runs read from a real store and reported to a fake Slack over HTTP: every EMF line parses with
Powertools' own types and nothing is printed behind the metrics' back; every dimension value is a name the run
declared (its workflow, its tools, its skills, a status with an error class) or ``other``, and one CloudWatch
takes; nothing is lost (waits, calls); and the runs channel line is posted whatever the metrics do."""

from __future__ import annotations

import contextlib
import io
import string
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.chat.channels import Replies
from agent_runtime.chat.replies import SlackReplier
from agent_runtime.config import RuntimeConfig
from agent_runtime.inbound import TriggerEvent
from agent_runtime.record import RunRecord, RunStatus
from agent_runtime.service.metrics import MAX_LABEL, RunMetrics
from agent_runtime.service.reports import Reports
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.stores.runs import RECORD, run_partition
from agent_runtime.testing import call, reply
from aws_lambda_powertools import Logger
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.metrics_support import blobs, by_dimensions
from tests.triggers_support import FakeApis, fake_apis, slack_mention, slack_request

TOOLS = ("file_read", "file_regex", "python", "notion_search", "jira_issue")  # the run's tools
SKILLS = ("runbooks", "pdf")
STATUSES = [str(s) for s in RunStatus]
EVENT = TriggerEvent("slack", "app_mention", "Ev1", "go", "U1", "T1", "Ev1", {"channel": "C0OPS", "thread_ts": "1.0"})

invented = st.one_of(
    st.text(min_size=1, max_size=80),
    st.emails(),
    st.integers(65, 70_000).map(lambda n: "x" * n),
    st.text(alphabet=string.printable, min_size=1, max_size=40),
).filter(lambda name: name not in TOOLS)
calls = st.lists(st.one_of(st.sampled_from(TOOLS).map(lambda n: (n, False)), invented.map(lambda n: (n, True))),
                 max_size=60)  # fmt: skip
errors = st.one_of(st.none(), st.sampled_from(["ModelError", "KeyError"]), st.text(max_size=100))


@st.composite
def runs(draw: st.DrawFn) -> dict[str, Any]:
    """A stored record as the loop writes it: its calls (an invented name marked ``unknown``), waits, skills."""
    waits = draw(st.integers(0, 350))
    events: list[dict[str, Any]] = []
    for i in range(waits):
        asked, decided = "2026-11-26T10:00:00+00:00", f"2026-11-26T10:{i % 60:02d}:01+00:00"
        events += [{"type": "approval_requested", "call": f"c{i}", "at": asked},
                   {"type": "approval_decided", "call": f"c{i}", "at": decided}]  # fmt: skip
    events += [{"type": "skill_loaded", "skill": s} for s in draw(st.lists(st.sampled_from(SKILLS), max_size=4))]
    status = draw(st.one_of(st.sampled_from(STATUSES), st.text(max_size=30)))
    error = draw(errors)
    events += [{"type": "failed", "error": error}] if error is not None else []
    made = [{"name": name, "is_error": bad} | ({"unknown": True} if bad else {}) for name, bad in draw(calls)]
    cost = draw(st.one_of(st.floats(0, 50), st.floats(allow_nan=True, allow_infinity=True)))
    return {"run_id": f"run-{draw(st.integers(0, 10**9))}", "workflow": "ops", "status": status, "cost_usd": cost,
            "usage": {"prompt_tokens": 100, "cached_tokens": 10, "total_tokens": 120}, "events": events,
            "started_at": "2026-11-26T10:00:00+00:00", "ended_at": "2026-11-26T11:00:00+00:00",
            "model_calls": [{"first_token_ms": 300.0}], "tool_calls": made[: len(made) // 2],
            "children": [{"tool_calls": made[len(made) // 2 :], "events": []}]}  # fmt: skip


@pytest.fixture
def slack() -> Iterator[tuple[FakeApis, Replies]]:
    with fake_apis() as (apis, base):
        yield apis, Replies(slack=SlackReplier("xoxb-test", base_url=f"{base}/"), jira=None)


def reports(tmp: Path, replies: Replies, out: list[str]) -> Reports:
    config = RuntimeConfig(workflows_dir=tmp, skills_dir=tmp, runs_channel="C0RUNS")
    runs = RunStore(LocalStore(tmp / "store"))
    return Reports(config, runs, lambda key: None, lambda: replies, Logger(service="t"), time.time,
                   RunMetrics(out=out.append))  # fmt: skip


def declared(key: str, value: str, record: dict[str, Any], error: str | None) -> bool:
    """A dimension value is the run's own name, or ``other``."""
    allowed = {"service": {"agent-runtime"}, "workflow": {"ops"}, "trigger": {"slack"},
               "tool": {*TOOLS, "other"}, "skill": {*SKILLS, "other"}}  # fmt: skip
    if key != "reason":
        return value in allowed[key]
    status, _, cause = value.partition(":")
    named = cause in ("", "other") or (cause == error and cause.isidentifier())  # a class's name, never other text
    return value == "other" or (status in STATUSES and named)


SLOW = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large]


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(record=runs())
def test_any_run_is_reported_within_emfs_limits_by_its_own_names(record, slack, tmp_path) -> None:
    apis, replies = slack
    out: list[str] = []
    report = reports(tmp_path, replies, out)
    report.runs.store.put_latest(run_partition(record["run_id"]), RECORD, record)
    posted = len(apis.named("chat.postMessage"))
    stray = io.StringIO()
    with contextlib.redirect_stdout(stray):  # Powertools' own flush prints here, past RunMetrics.out
        report.finished(EVENT, RunRecord(record["run_id"], "ops", "gpt-4o"), None, False)
    assert '"_aws"' not in stray.getvalue()
    assert len(apis.named("chat.postMessage")) == posted + 1  # the runs channel line, whatever the metrics did
    found = blobs("\n".join(out))
    error = next((e["error"] for e in record["events"] if e["type"] == "failed"), None)
    for blob in found:
        for key in blob["_aws"]["CloudWatchMetrics"][0]["Dimensions"][0]:
            value = blob[key]
            assert 0 < len(value) <= MAX_LABEL and value.isascii() and value.isprintable()
            assert declared(key, value, record, error), (key, value)
        assert all(len(blob[m["Name"]]) < 100 for m in blob["_aws"]["CloudWatchMetrics"][0]["Metrics"])
    grouped = by_dimensions(found)
    main = grouped[frozenset({"service", "workflow", "trigger"})]
    waits = sum(1 for e in record["events"] if e["type"] == "approval_requested")
    assert sum(len(b.get("ApprovalWait", [])) for b in main) == waits and main[0]["ApprovalsAsked"] == [waits]
    by_tool = grouped.get(frozenset({"service", "workflow", "tool"}), [])
    called = len(record["tool_calls"]) + len(record["children"][0]["tool_calls"])
    assert sum(b["ToolCalls"][0] for b in by_tool) == called == main[0]["ToolCalls"][0]


def test_a_failing_report_never_costs_the_other(slack, tmp_path) -> None:
    """The metrics' output refused (a closed pipe): the runs channel line is posted; Slack refusing the line: the
    metrics are printed; the store unreadable: both still go out, from this invocation's record."""
    apis, replies = slack
    out: list[str] = []
    report = reports(tmp_path, replies, out)
    record = RunRecord("run-1", "ops", "gpt-4o", status=RunStatus.COMPLETED)
    report.runs.save_record(record)

    def closed(line: str) -> None:
        raise BrokenPipeError("stdout closed")

    report.metrics = RunMetrics(out=closed)
    report.finished(EVENT, record, None, False)
    assert len(apis.named("chat.postMessage")) == 1
    report.metrics = RunMetrics(out=out.append)
    apis.refuse["chat.postMessage"] = "channel_not_found"
    report.finished(EVENT, record, None, False)
    assert by_dimensions(blobs("\n".join(out)))[frozenset({"service", "workflow", "trigger"})][0]["Runs"] == [1.0]
    del apis.refuse["chat.postMessage"]
    out.clear()
    Path(report.runs.store._item(run_partition("run-1"), RECORD)).write_text("{not json")  # type: ignore[attr-defined]
    report.finished(EVENT, record, None, False)
    assert len(apis.named("chat.postMessage")) == 3 and len(blobs("\n".join(out))) == 2  # the run's, the rollup


def test_invented_tool_names_through_the_worker_count_as_other(system, scripted, capsys) -> None:
    """The real loop marks a call to a name the run has no tool for; its metrics name the run's tools only, and the
    runs channel gets its line."""
    huge, email = "x" * 5_000, "alice@example.com"
    server = scripted(call(email, {}), call(huge, {}), call("file_regex", {"id": "nope", "pattern": "x"}),
                      reply("Done."))  # fmt: skip
    s = system(server, settings={"runs_channel": "C0RUNS"})
    s.post("/slack/events", *slack_request(slack_mention("Ev900")))
    capsys.readouterr()
    assert s.deliver() == ["answered"]
    printed = capsys.readouterr().out
    found = by_dimensions(blobs(printed))
    tools = {b["tool"]: b["ToolCalls"] for b in found[frozenset({"service", "workflow", "tool"})]}
    assert tools == {"other": [2.0], "file_regex": [1.0]}
    [summary] = s.worker.process.runs.list_runs(limit=1)
    stored = s.worker.process.runs.load_record(summary.run_id) or {}
    assert [c.get("unknown", False) for c in stored["tool_calls"]] == [True, True, False]
    assert [c["name"] for c in stored["tool_calls"]][:1] == [email]  # the record keeps what the model asked
    [line] = [m["text"] for m in s.apis.named("chat.postMessage") if m["channel"] == "C0RUNS"]
    assert "design-review" in line
    assert not [text for text in printed.splitlines() if text.startswith('{"_aws"') and email in text]
