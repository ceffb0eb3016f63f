"""A workflow's access rules and budgets end to end (issue 53): Slack's signed request → the webhook → SQS (moto
server) → the worker → the scripted model over HTTP. Who may start it (refused before any run, told in one private
line), which tools a requester's runs are offered, who may decide its approvals, and a person's monthly budget
that stops their runs and no one else's — each decision in the run's record."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import io
import json
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.cli import main
from agent_runtime.deadline import Deadline
from agent_runtime.pages.build import page_for
from agent_runtime.stores import RunStore
from agent_runtime.testing import call, reply
from agent_runtime.triggers.queued import TickMessage

from tests.approvals_support import approval_value, click
from tests.slack_support import PARENT, REPLY, reaction
from tests.triggers_support import slack_mention, slack_request

GUARDED = """\
name: guarded-ops
description: Operational actions, for on-call and support only.
prompt: You operate services.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
limits:
  max_cost_per_person_month: 0.1
tools:
  python: [ops_tools:restart_service, ops_tools:drain_report]
  approval_timeout_hours: 1
triggers:
  slack: {channels: [C0GUARD]}
access:
  groups:
    oncall: {slack_users: [U0DANA, U0LEAD], slack_usergroups: [S0SRE]}
    support: {slack_users: [U0SAM]}
    leads: {slack_users: [U0LEAD]}
  start: [oncall, support]
  approve: [leads]
  tools:
    oncall: ["*"]
    support: [drain_report]
"""


DESK = """\
name: support-desk
description: Answers the support team.
prompt: You help support.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack: {channels: [C0DESK]}
access:
  groups:
    support: {slack_users: [U0SAM]}
  start: [support]
"""


def ask(s: Any, event_id: str, user: str, text: str, ts: str, channel: str = "C0GUARD") -> dict[str, Any]:
    event = slack_mention(event_id, channel=channel, ts=ts, user=user, text=f"<@U0BOT> {text}")
    return json.loads(s.post("/slack/events", *slack_request(event))["body"])


def guarded(tmp_path: Path, ops: Any) -> Path:
    log = ops()
    (tmp_path / "guarded-ops.yaml").write_text(GUARDED)
    return log


def decisions(s: Any, run_id: str) -> list[dict[str, Any]]:
    record = RunStore(s.store).load_record(run_id) or {}
    return [event for event in record.get("events", []) if event.get("type") == "access_decided"]


def only_run(s: Any) -> str:
    [row] = RunStore(s.store).list_runs()
    return row.run_id


def test_a_requester_outside_the_groups_is_refused_before_any_run_with_one_private_line(
    system, scripted, ops, tmp_path
) -> None:
    guarded(tmp_path, ops)
    (tmp_path / "support-desk.yaml").write_text(DESK)
    server = scripted()
    s = system(server)
    # The desk's rule lists ids only: the webhook refuses at once. The guarded workflow's on-call group has a
    # Slack user group, which only the worker can read: it refuses there. Either way no run starts.
    refused = ask(s, "Ev1", "U0EVE", "help", "1763800001.0", channel="C0DESK")
    assert refused == {"status": "refused", "workflow": "support-desk"}
    assert ask(s, "Ev2", "U0EVE", "restart payments", "1763800002.0")["status"] == "queued"
    assert s.deliver() == ["refused", "refused"]
    told = sorted(s.apis.named("chat.postEphemeral"), key=lambda m: m["channel"])  # two threads: either first
    assert [(m["user"], m["channel"]) for m in told] == [("U0EVE", "C0DESK"), ("U0EVE", "C0GUARD")]
    assert all("Not started" in m["text"] and "access.start" in m["text"] for m in told)
    assert "support, the groups" in told[0]["text"] and "oncall, support" in told[1]["text"]
    assert s.apis.named("chat.postMessage") == [] and server.requests == []  # no working message, no model call
    assert RunStore(s.store).list_runs() == []


def test_a_user_groups_member_is_let_in_by_the_worker_and_a_stranger_is_refused_there(
    system, scripted, ops, tmp_path
) -> None:
    guarded(tmp_path, ops)
    server = scripted(reply("All quiet."))
    s = system(server)
    s.apis.usergroups["S0SRE"] = ["U0RAY"]
    assert ask(s, "Ev1", "U0RAY", "anything on fire?", "1763800001.0")["status"] == "queued"  # only a lookup can tell
    assert ask(s, "Ev2", "U0ZED", "anything on fire?", "1763800002.0")["status"] == "queued"
    assert sorted(s.deliver()) == ["answered", "refused"]
    [told] = s.apis.named("chat.postEphemeral")
    assert told["user"] == "U0ZED" and "Not started" in told["text"]
    [start] = decisions(s, only_run(s))
    assert start["action"] == "start" and start["allowed"] and start["who"] == "slack:U0RAY"
    assert start["groups"] == ["oncall"] and "access.start" in start["reason"]


def test_a_tool_outside_the_requesters_groups_is_not_offered_nor_run(system, scripted, ops, tmp_path) -> None:
    log = guarded(tmp_path, ops)
    offered: list[list[str]] = []

    def restart_anyway(request: Any) -> Any:
        offered.append(request.tool_names)
        return call("restart_service", {"service": "payments"})  # a name it was never shown

    server = scripted(restart_anyway, reply("I cannot restart it."))
    s = system(server)
    ask(s, "Ev1", "U0SAM", "restart payments", "1763800001.0")
    assert s.deliver() == ["answered"]
    assert "drain_report" in offered[0] and "restart_service" not in offered[0]
    assert not log.exists()
    assert "no group of yours reaches restart_service" in json.dumps(server.requests[1].body["messages"])
    start, refused = decisions(s, only_run(s))
    assert start["groups"] == ["support"]
    assert refused["action"] == "tool" and not refused["allowed"] and refused["tool"] == "restart_service"
    page = page_for(RunStore(s.store), only_run(s)) or ""  # the run's page shows both decisions
    assert "access: start allowed for slack:U0SAM (groups: support)" in page
    assert "access: tool restart_service refused for slack:U0SAM" in page


def test_an_approver_outside_the_approve_groups_cannot_approve(system, scripted, ops, tmp_path) -> None:
    log = guarded(tmp_path, ops)
    server = scripted(call("restart_service", {"service": "payments"}), reply("Restarted payments."))
    s = system(server)
    ask(s, "Ev1", "U0DANA", "restart payments", "1763800001.0")
    assert s.deliver() == ["awaiting_approval"]
    assert "restart_service" in server.requests[0].tool_names  # on-call reaches every tool
    value, _ = approval_value(s)
    click(s, value, "U0DANA")  # on call, but not a lead
    assert s.deliver() == ["refused"] and not log.exists()
    assert any("approvers" in m["text"] for m in s.apis.named("chat.postEphemeral") if m["user"] == "U0DANA")
    click(s, value, "U0LEAD")
    assert s.deliver() == ["answered"]
    assert log.read_text() == "payments\n"


def test_a_persons_monthly_budget_stops_their_runs_and_no_one_elses_and_stats_add_up_by_person(
    system, scripted, ops, tmp_path, monkeypatch
) -> None:
    guarded(tmp_path, ops)

    def expensive(usage: dict[str, Any]) -> dict[str, Any]:  # 100k prompt tokens: $0.25 at gpt-4o's list price
        return {**usage, "prompt_tokens": 100_000, "total_tokens": 100_000 + usage["completion_tokens"]}

    server = scripted(reply("Done once."), reply("Done for the lead."), usage=expensive)
    s = system(server, local_store=True)  # the store `runs stats` reads below (AGENT_STATE_DIR)
    ask(s, "Ev1", "U0DANA", "drain report for payments", "1763800001.0")
    assert s.deliver() == ["answered"]
    ask(s, "Ev2", "U0DANA", "and again", "1763800002.0")
    assert s.deliver() == ["refused"]
    [told] = s.apis.named("chat.postEphemeral")
    assert told["user"] == "U0DANA"
    assert (
        "slack:U0DANA's budget of $0.1 a month" in told["text"] and "limits.max_cost_per_person_month" in told["text"]
    )
    assert "$0.2500 spent" in told["text"] and "workflows/guarded-ops.yaml" in told["text"]
    ask(s, "Ev3", "U0LEAD", "drain report for search", "1763800003.0")
    assert s.deliver() == ["answered"]  # the lead's month is their own
    assert len(RunStore(s.store).list_runs()) == 2
    monkeypatch.setenv("AGENT_STATE_DIR", str(tmp_path / "state"))
    by_person, by_team = stats("--by", "person"), stats("--by", "team")
    rows = {row["person"]: row for row in by_person["groups"]}
    assert set(rows) == {"slack:U0DANA", "slack:U0LEAD"} and [r["runs"] for r in rows.values()] == [1, 1]
    total = sum(row["cost_usd"] for row in stats()["groups"])
    assert sum(row["cost_usd"] for row in rows.values()) == pytest.approx(total) and total > 0.4
    assert [(row["team"], row["runs"]) for row in by_team["groups"]] == [("leads", 1), ("oncall", 2)]


def stats(*args: str) -> dict[str, Any]:
    """``runs stats --json`` in process, as a person runs it."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["runs", "stats", "--since", "1d", "--json", *args]) == 0
    return json.loads(out.getvalue())


TRIGGERED = """\
name: triage
description: Triage by reaction, by GitHub, and every night.
prompt: You triage.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack: {channels: [C0OPS], reactions: [jira]}
  webhook: {secret: github_webhook_secret, signature: github, events: [pull_request], message: $.pull_request.title}
  schedule: [{name: nightly, expression: rate(1 day), message: Triage the night.}, {name: hourly,
    expression: rate(1 hour), message: Triage the hour.}]
access:
  groups:
    triagers: {slack_users: [U0FRANK], webhook_senders: [dependabot], schedules: [nightly]}
  start: [triagers]
"""
SECRET = "gh-webhook-secret-for-tests"


def delivery(sender: str, number: int) -> tuple[bytes, dict[str, str]]:
    body = json.dumps({"action": "opened", "pull_request": {"title": f"PR {number}"}, "sender": {"login": sender}})
    signature = "sha256=" + hmac.new(SECRET.encode(), body.encode(), hashlib.sha256).hexdigest()
    headers = {"X-Hub-Signature-256": signature, "X-GitHub-Delivery": f"d-{number}", "X-GitHub-Event": "pull_request"}
    return body.encode(), headers


def test_a_reactions_a_webhooks_and_a_schedules_run_are_for_whom_the_docs_name_or_refused(
    system, scripted, tmp_path
) -> None:
    (tmp_path / "triage.yaml").write_text(TRIGGERED)
    server = scripted(reply("Triaged the reaction."), reply("Triaged the PR."), reply("Triaged the night."))
    s = system(server, secrets={"GITHUB_WEBHOOK_SECRET": SECRET})
    s.apis.threads[PARENT] = [{"ts": REPLY, "thread_ts": PARENT, "user": "U0ERIN", "text": "The consumer drops."}]
    # A reaction is the reactor's, not the message author's: U0DANA is refused, privately; U0FRANK's runs.
    assert json.loads(s.post("/slack/events", *slack_request(reaction("Ev1")))["body"])["status"] == "refused"
    assert s.deliver() == ["refused"]
    [told] = s.apis.named("chat.postEphemeral")
    assert told["user"] == "U0DANA" and "triagers" in told["text"]
    s.post("/slack/events", *slack_request(reaction("Ev2", user="U0FRANK")))
    # A webhook's run is its sender's: octocat's delivery is refused to GitHub (403, the reason), dependabot's runs.
    refused = s.post("/hooks/triage", *delivery("octocat", 1))
    assert refused["statusCode"] == 403 and "triagers" in json.loads(refused["body"])["error"]
    assert s.post("/hooks/triage", *delivery("dependabot", 2))["statusCode"] == 200
    assert sorted(s.deliver()) == ["answered", "answered"]
    # A schedule's run is the schedule's: nightly is in the group, hourly is not (refused, nothing posted).
    ticked = [
        s.worker.handle(TickMessage("triage", name, "2026-11-27T06:00:00Z").body(), deadline=Deadline.after(600))
        for name in ("nightly", "hourly")
    ]
    assert ticked == ["answered", "refused"]
    people = sorted(decisions(s, row.run_id)[0]["who"] for row in RunStore(s.store).list_runs())
    assert people == ["schedule:nightly", "slack:U0FRANK", "webhook:dependabot"]


PENNY = """\
name: penny
description: Answers on a tight budget.
prompt: You help.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
limits:
  max_cost_per_person_day: 0.02
triggers:
  slack: {channels: [C0GUARD]}
"""


def test_a_budget_stop_says_how_to_raise_it_and_what_is_left_cannot_start_a_run(system, scripted, tmp_path) -> None:
    """A newcomer's Dana: a run stopped by her day's budget offered "continue with $N more" (no approver, and a
    grant lifts no person's budget), and what was left started runs that stopped at once. The stop names the
    budget, what is left and how to raise it, and never "continue"; a mention that the rest cannot pay for a run
    (a request and a last answer at the shortest reply, as the spend limit plans them) is refused privately."""
    (tmp_path / "penny.yaml").write_text(PENNY)

    def costly(usage: dict[str, Any]) -> dict[str, Any]:  # $0.0155 at gpt-4o's list price: $0.0045 left
        return {**usage, "prompt_tokens": 6_200, "total_tokens": 6_200 + usage["completion_tokens"]}

    server = scripted(call("file_read", {"id": "file-0"}), usage=costly)
    s = system(server)
    ask(s, "Ev1", "U0DANA", "read it", "1763800001.0")
    assert s.deliver() == ["failed"]  # stopped at the budget with no last answer: why is said in the thread
    said = " ".join(text for text in thread_texts(s))
    assert "slack:U0DANA's budget of $0.02 a day (UTC) for penny (limits.max_cost_per_person_day)" in said, said
    assert (
        "is left: raise limits.max_cost_per_person_day in workflows/penny.yaml to go on, or wait for the next "
        "day (UTC)" in said
    )
    assert "continue with" not in said
    for event_id, text in (("Ev2", "and again"), ("Ev3", "continue with $1 more")):
        ask(s, event_id, "U0DANA", text, f"1763800002.{event_id[-1]}")
        assert s.deliver() == ["refused"]
    told = [m["text"] for m in s.apis.named("chat.postEphemeral")]
    assert len(told) == 2 and len(RunStore(s.store).list_runs()) == 1
    assert all("Not started: slack:U0DANA's budget of $0.02 a day" in text for text in told), told
    assert all("less than the least a run needs (about $0.0" in text and "limits.max_cost_per_person_day" in text
               for text in told)  # fmt: skip


def thread_texts(s: Any) -> list[str]:
    return [body.get("text", "") or json.dumps(body) for name, body in s.apis.calls if name.startswith("chat.")]
