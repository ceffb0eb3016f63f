"""Each run's metrics: the embedded-metric-format lines the worker prints as a run ends (and as it is rated) parse
with Powertools' own EMF types, every dimension and metric they name is in the line, and they carry the workflow
and the trigger — runs, failures by reason, cost, tokens and cached share, tool calls by tool, skill loads by
skill, approvals and their wait, feedback. Through the webhook, SQS (moto) and the worker."""

from __future__ import annotations

import json

from agent_runtime.reading.figures import figures
from agent_runtime.service.metrics import RunMetrics
from agent_runtime.testing import reply, server_error
from agent_runtime.views import read_run

from tests.metrics_support import blobs, by_dimensions
from tests.slack_support import feedback_buttons, rate
from tests.triggers_support import slack_mention, slack_request
from tests.worker_support import read_design


def test_a_runs_metrics_carry_its_workflow_and_trigger(system, scripted, capsys) -> None:
    server = scripted(read_design, reply("Add a rollback plan."))
    s = system(server)
    s.apis.files["/files/design.md"] = b"# Design\n"
    attachment = {"id": "F1", "name": "design.md", "url_private": f"{s.base}/files/design.md", "size": 9}
    s.post("/slack/events", *slack_request(slack_mention("Ev800", files=[attachment])))
    capsys.readouterr()
    assert s.deliver() == ["answered"]
    printed = capsys.readouterr().out
    found = by_dimensions(blobs(printed))
    [run] = found[frozenset({"service", "workflow", "trigger"})]
    assert (run["service"], run["workflow"], run["trigger"]) == ("agent-runtime", "design-review", "slack")
    # who it was for: a line the dashboard's cost-by-person table adds up (no access rules: the mention's author)
    [person] = [json.loads(line) for line in printed.splitlines() if line.startswith('{"kind":"run_cost"')]
    assert (person["scope"], person["name"], person["workflow"]) == ("person", "slack:U0DANA", "design-review")
    assert person["usd"] == run["CostUSD"][0]
    assert run["Runs"] == [1.0] and run["RunFailures"] == [0.0] and run["ToolCalls"] == [1.0]
    assert run["Tokens"][0] > 0 and run["CostUSD"][0] > 0 and 0 <= run["CachedShare"][0] <= 100
    assert run["ModelCalls"] == [2.0] and run["TimeToFirstToken"][0] >= 0 and run["Duration"][0] >= 0
    [rollup] = found[frozenset({"service", "workflow"})]
    assert rollup["Runs"] == [1.0] and rollup["CostUSD"] == run["CostUSD"]
    [tool] = found[frozenset({"service", "workflow", "tool"})]
    assert (tool["tool"], tool["ToolCalls"]) == ("file_read", [1.0])
    assert frozenset({"service", "workflow", "reason"}) not in found  # it completed

    rate(s, feedback_buttons(s)["bad"], "U0DANA")
    capsys.readouterr()
    assert s.deliver() == ["rated"]
    [feedback] = blobs(capsys.readouterr().out)
    assert (feedback["workflow"], feedback["FeedbackGood"], feedback["FeedbackBad"]) == ("design-review", [0.0], [1.0])
    rate(s, feedback_buttons(s)["bad"], "U0DANA")  # the same again: counted once
    capsys.readouterr()
    assert s.deliver() == ["rated"] and blobs(capsys.readouterr().out) == []


def test_a_failed_run_counts_its_reason(system, scripted, capsys) -> None:
    s = system(scripted(server_error(500), server_error(500), server_error(500)))
    s.post("/slack/events", *slack_request(slack_mention("Ev810")))
    capsys.readouterr()
    assert s.deliver() == ["failed"]
    found = by_dimensions(blobs(capsys.readouterr().out))
    [reason] = found[frozenset({"service", "workflow", "reason"})]
    assert reason["reason"].startswith("failed:") and reason["RunFailures"] == [1.0]
    assert found[frozenset({"service", "workflow", "trigger"})][0]["RunFailures"] == [1.0]


def test_skills_and_approvals_are_counted_with_their_waits() -> None:
    record = {
        "workflow": "ops", "status": "completed", "cost_usd": 0.5,
        "usage": {"prompt_tokens": 1000, "cached_tokens": 250, "total_tokens": 1100},
        "started_at": "2026-11-26T10:00:00+00:00", "ended_at": "2026-11-26T10:02:00+00:00",
        "model_calls": [{"first_token_ms": 420.0}, {"first_token_ms": 80.0}],
        "tool_calls": [{"name": "restart", "is_error": False}, {"name": "restart", "is_error": True}],
        "events": [
            {"type": "skill_loaded", "skill": "runbooks"},
            {"type": "approval_requested", "call": "c1", "at": "2026-11-26T10:00:10+00:00"},
            {"type": "approval_decided", "call": "c1", "at": "2026-11-26T10:01:40+00:00", "decision": "approved"},
        ],
        "children": [{"tool_calls": [{"name": "file_read"}], "events": [{"type": "skill_loaded", "skill": "pdf"}]}],
    }  # fmt: skip
    run = figures(read_run(record), "jira")
    assert run.cached_share == 0.25 and run.first_token_ms == 420.0 and run.duration_s == 120.0
    assert run.tools == {"restart": 2, "file_read": 1} and run.tool_errors == 1
    assert run.skills == {"runbooks": 1, "pdf": 1} and run.approvals == 1 and run.approval_waits == (90.0,)
    printed: list[str] = []
    RunMetrics(out=printed.append).ended(run)
    found = by_dimensions(blobs("\n".join(printed)))
    [main] = found[frozenset({"service", "workflow", "trigger"})]
    assert main["ApprovalWait"] == [90.0] and main["ApprovalsAsked"] == [1.0] and main["CachedShare"] == [25.0]
    assert sorted((b["skill"], b["SkillLoads"]) for b in found[frozenset({"service", "workflow", "skill"})]) == [
        ("pdf", [1.0]), ("runbooks", [1.0])]  # fmt: skip


def test_runs_stats_adds_up_what_the_metrics_carry(system, scripted, capsys, tmp_path) -> None:
    """The same runs, two readings: the EMF lines the worker printed, and `runs stats` over the store."""
    from tests.cli_support import run_cli

    server = scripted(reply("One."), server_error(500), server_error(500), server_error(500))
    s = system(server, local_store=True)
    capsys.readouterr()
    s.post("/slack/events", *slack_request(slack_mention("Ev820", ts="1763800820.0")))
    s.post("/slack/events", *slack_request(slack_mention("Ev821", ts="1763800821.0")))
    assert sorted(s.deliver()) == ["answered", "failed"]
    printed = blobs(capsys.readouterr().out)
    emitted = [b for b in printed if "trigger" in b]
    shown = run_cli("runs", "stats", "--json", env={"AGENT_STATE_DIR": str(tmp_path / "state")})
    assert shown.returncode == 0, shown.stderr
    report = json.loads(shown.stdout)
    [group] = report["groups"]
    assert (group["workflow"], group["trigger"], group["runs"], group["failures"]) == ("design-review", "slack", 2, 1)
    assert group["cost_usd"] == round(sum(b["CostUSD"][0] for b in emitted), 6)
    assert group["tokens"] == sum(b["Tokens"][0] for b in emitted)
    [reason] = [b["reason"] for b in printed if "reason" in b]
    assert report["failures_by_reason"] == {reason: 1} and reason.startswith("failed:")
    table = run_cli("runs", "stats", "--since", "1h", env={"AGENT_STATE_DIR": str(tmp_path / "state")}).stdout
    assert "2 run(s) since" in table and "design-review" in table and "failures by reason: failed:" in table
    later = run_cli("runs", "stats", "--since", "2099-01-01", env={"AGENT_STATE_DIR": str(tmp_path / "state")})
    assert later.returncode == 2 and "is in the future" in later.stderr  # a period no run can be in
    bad = run_cli("runs", "stats", "--since", "last tuesday", env={"AGENT_STATE_DIR": str(tmp_path / "state")})
    assert bad.returncode == 2 and "give a span (7d, 24h, 30m, 2w) or a date" in bad.stderr


def test_an_approved_run_counts_its_approval_and_wait_once_across_invocations(system, scripted, ops, capsys) -> None:
    """Metrics x approvals x resumes: the request (first invocation) and the decision (the next) are one approval
    with its wait, and the run counts once, when it ends — not at its suspension."""
    from agent_runtime.testing import call

    from tests.approvals_support import approval_value, click, mention

    ops()
    s = system(scripted(call("restart_service", {"service": "payments"}), reply("Restarted payments.")))
    s.post("/slack/events", *slack_request(mention("Ev830", "restart payments", "1763800830.0")))
    capsys.readouterr()
    assert s.deliver() == ["awaiting_approval"]
    assert [b for b in blobs(capsys.readouterr().out) if "trigger" in b] == []  # not ended: not counted yet
    click(s, approval_value(s)[0], "U0DANA")
    assert s.deliver() == ["answered"]
    [run] = [b for b in blobs(capsys.readouterr().out) if "trigger" in b]
    assert run["Runs"] == [1.0] and run["ApprovalsAsked"] == [1.0] and len(run["ApprovalWait"]) == 1
    assert run["ToolCalls"] == [1.0] and run["ModelCalls"] == [2.0]
    [summary] = s.worker.process.runs.list_runs(limit=5)
    stored = s.worker.process.runs.load_record(summary.run_id) or {}  # runs show, the page: the whole run too
    assert stored["invocations"] == 2 and len(stored["model_calls"]) == 2
    kinds = [e["type"] for e in stored["events"]]
    assert kinds.index("approval_requested") < kinds.index("approval_decided")
