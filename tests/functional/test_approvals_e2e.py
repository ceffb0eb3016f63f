"""Approvals across invocations, end to end: Slack mention → webhook → SQS (moto server) → worker → the model asks
for a mutating tool → Approve/Deny buttons in the thread → a signed interactivity request → the worker resumes."""

from __future__ import annotations

import json
import time
import urllib.parse
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Services
from agent_runtime.chat.channels import Channel
from agent_runtime.service import turn
from agent_runtime.service.approvals import ApprovalDesk
from agent_runtime.testing import call, calls, reply

from tests.approvals_support import OPS, TOOL, approval_value, asked_ts, asks_approval, click, jira_says, mention
from tests.slack_support import feedback_buttons, rate
from tests.triggers_support import slack_request


def test_approve_from_slack_resumes_the_run_and_the_tool_runs_once(system, scripted, ops) -> None:
    log = ops()
    server = scripted(call("restart_service", {"service": "payments"}), reply("Restarted payments."))
    s = system(server)
    assert (
        json.loads(s.post("/slack/events", *slack_request(mention("Ev1", "restart payments", "1763800001.0")))["body"])[
            "status"
        ]
        == "queued"
    )
    assert s.deliver() == ["awaiting_approval"]
    assert not log.exists()  # asked, not run
    value, asked = approval_value(s)
    assert "payments" in json.dumps(asked["blocks"]) and "restart_service" in asked["text"]
    assert value.count("|") == 2 and "payments" not in value  # ids only, never the arguments
    assert click(s, value, "U0DANA")["statusCode"] == 200
    assert s.deliver() == ["answered"]
    assert log.read_text() == "payments\n"
    decided = [u for u in s.apis.named("chat.update") if "approved by <@U0DANA>" in u["text"]]
    assert decided and decided[0]["ts"] == asked_ts(s)
    assert any("Restarted payments." in u["text"] for u in s.apis.named("chat.update"))
    # a second click, and SQS delivering every message again: nothing runs twice
    assert click(s, value, "U0DANA")["statusCode"] == 200
    assert s.deliver() == ["duplicate"]
    assert set(s.redeliver()) == {"duplicate"}
    assert log.read_text() == "payments\n"
    record = json.dumps([m.get("body") for m in s.received])
    assert "approval_approve" not in record  # the queue carries the decision, not Slack's payload


def test_deny_from_slack_tells_the_model_and_nothing_runs(system, scripted, ops) -> None:
    log = ops()
    server = scripted(call("restart_service", {"service": "payments"}), reply("Not restarted: denied."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev2", "restart payments", "1763800002.0")))
    assert s.deliver() == ["awaiting_approval"]
    value, _ = approval_value(s)
    click(s, value, "U0DANA", action="approval_deny")
    assert s.deliver() == ["answered"]
    assert not log.exists()
    result = next(iter(server.requests[1].tool_results().values()))
    assert result.startswith("ERROR: not run: this restart_service call was denied by U0DANA")
    [summary] = [r for r in s.worker.process.runs.list_runs() if r.status == "completed"]
    stored = s.worker.process.runs.load_record(summary.run_id)
    assert stored is not None
    assert [(c["name"], c["mutating"], c["executed"]) for c in stored["tool_calls"]] == [
        ("restart_service", True, False)  # was recorded mutating: false
    ]


def test_an_approver_not_on_the_list_is_refused_and_told(system, scripted, ops) -> None:
    log = ops("  approvers: [U0LEAD]")
    server = scripted(call("restart_service", {"service": "db"}), reply("Restarted db."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev3", "restart db", "1763800003.0")))
    assert s.deliver() == ["awaiting_approval"]
    value, _ = approval_value(s)
    click(s, value, "U0DANA")
    assert s.deliver() == ["refused"]
    [told] = s.apis.named("chat.postEphemeral")
    assert told["user"] == "U0DANA" and "approvers" in told["text"]
    assert not log.exists()
    click(s, value, "U0LEAD")
    assert s.deliver() == ["answered"] and log.read_text() == "db\n"


def test_forged_unsigned_and_replayed_clicks_are_refused(system, scripted, ops) -> None:
    ops()
    s = system(scripted())
    value = "run-x|call-1|slack-T0TEAM-C0OPS-1763800000.000100"
    assert click(s, value, "U0DANA", secret="not-the-secret")["statusCode"] == 401
    assert click(s, value, "U0DANA", at=time.time() - 600)["statusCode"] == 401  # a replay, outside 5 minutes
    body = urllib.parse.urlencode({"payload": json.dumps({"type": "block_actions"})}).encode()
    assert (
        s.post("/slack/interactivity", body, {"Content-Type": "application/x-www-form-urlencoded"})["statusCode"] == 401
    )
    assert click(s, value, "U0DANA")["statusCode"] == 200  # signed, but names a request nobody made
    assert s.deliver() == [] or True


def test_an_expired_request_tells_the_model_when_the_thread_moves_on(system, scripted, ops) -> None:
    log = ops()
    server = scripted(
        call("restart_service", {"service": "cache"}),
        reply("The restart was not approved in time."),
        reply("Here is the status."),
    )
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev4", "restart cache", "1763800004.0")))
    assert s.deliver() == ["awaiting_approval"]
    s.worker.process.clock = lambda: time.time() + 2 * 3600  # past approval_timeout_hours: 1
    s.post("/slack/events", *slack_request(mention("Ev5", "and the status?", "1763800005.0")))
    assert s.deliver() == ["answered"]
    assert not log.exists()
    expired = next(iter(server.requests[1].tool_results().values()))
    assert "expired before anyone decided" in expired
    texts = [u["text"] for u in s.apis.named("chat.update")]
    assert any("not approved in time" in t for t in texts) and any("Here is the status." in t for t in texts)


def fire(s: Any, name: str) -> dict[str, Any]:
    """What EventBridge Scheduler does at the schedule's time: its input, into the queue in its message group."""
    schedule = s.clients["scheduler"].get_schedule(Name=name, GroupName="default")
    target = schedule["Target"]
    # No deduplication id, as Scheduler sends: the queue deduplicates by content (template.yaml, create_stack).
    s.clients["sqs"].send_message(
        QueueUrl=s.queue_url, MessageBody=target["Input"], MessageGroupId=target["SqsParameters"]["MessageGroupId"]
    )
    return dict(schedule)


def test_an_expired_request_wakes_its_run_when_nobody_writes_again(system, scripted, ops) -> None:
    log = ops()
    server = scripted(call("restart_service", {"service": "cache"}), reply("The restart was not approved in time."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev6", "restart cache", "1763800006.0")))
    assert s.deliver() == ["awaiting_approval"]
    queue = s.clients["sqs"].get_queue_attributes(QueueUrl=s.queue_url, AttributeNames=["QueueArn"])
    schedules = s.clients["scheduler"].list_schedules(GroupName="default")["Schedules"]  # moto's, for every test
    [listed] = [x for x in schedules if x["Target"]["Arn"] == queue["Attributes"]["QueueArn"]]
    schedule = fire(s, listed["Name"])  # too early (clocks differ): nothing happens, and another is set
    assert s.deliver() == ["ignored"] and not log.exists()
    mine = [x for x in s.clients["scheduler"].list_schedules(GroupName="default")["Schedules"] if x["Target"]["Arn"]
            == queue["Attributes"]["QueueArn"]]  # fmt: skip
    [again] = [x["Name"] for x in mine if x["Name"] != listed["Name"]]  # on AWS the first deleted itself
    asked = json.loads(schedule["Target"]["Input"])
    at = datetime.strptime(schedule["ScheduleExpression"], "at(%Y-%m-%dT%H:%M:%S)").replace(tzinfo=UTC)
    assert abs(at.timestamp() - (time.time() + 3600)) < 60  # approval_timeout_hours: 1
    assert asked["type"] == "expire" and schedule["ActionAfterCompletion"] == "DELETE"
    assert schedule["Target"]["SqsParameters"]["MessageGroupId"] == "slack-T0TEAM-C0OPS-1763800000.000100"
    s.worker.process.clock = lambda: time.time() + 2 * 3600
    # SQS drops a body it saw in the last five minutes (content-based deduplication; moto forgets deleted
    # messages, so the check is on the bodies): the second wake-up must not repeat the first's.
    assert fire(s, again)["Target"]["Input"] != schedule["Target"]["Input"]
    assert s.deliver() == ["answered"]
    assert not log.exists()
    expired = next(iter(server.requests[1].tool_results().values()))
    assert "expired before anyone decided" in expired
    texts = [u["text"] for u in s.apis.named("chat.update")]
    assert any(t.startswith(":hourglass: `restart_service`: expired") for t in texts)  # the buttons are gone
    assert any("not approved in time" in t for t in texts)
    value, _ = approval_value(s)
    click(s, value, "U0DANA")  # a click now decides nothing, and nothing runs
    assert s.deliver() == ["duplicate"] and not log.exists()


OPS_JIRA = """\
name: ops-actions
description: Does operational actions, with approval.
prompt: You operate services.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
tools:
  python: [ops_tools:restart_service]
  approvers: [5b10lead]
triggers:
  jira: {projects: [OPS]}
"""


def test_a_jira_comment_approves_a_pending_call(system, scripted, ops, tmp_path: Path) -> None:
    from tests.triggers_support import jira_request

    log = ops()
    (tmp_path / "ops-actions.yaml").write_text(OPS_JIRA)
    server = scripted(call("restart_service", {"service": "queue"}), reply("Restarted the queue."))
    s = system(server)
    s.post("/jira/webhook", *jira_request(jira_says("@agent restart the queue", "20001", "5b10dana")))
    assert s.deliver() == ["awaiting_approval"]
    [asked] = [c for c in s.apis.named("jira.comment") if "Approval needed" in json.dumps(c["body"])]
    assert "restart_service" in json.dumps(asked["body"]) and "queue" in json.dumps(asked["body"])
    s.post("/jira/webhook", *jira_request(jira_says("approve", "20002", "5b10dana")))  # not an approver
    assert s.deliver() == ["refused"] and not log.exists()
    s.post("/jira/webhook", *jira_request(jira_says("Approve.", "20003", "5b10lead")))
    assert s.deliver() == ["answered"]
    assert log.read_text() == "queue\n"
    bodies = [json.dumps(c["body"]) for c in s.apis.named("jira.comment")]
    assert any("approved by 5b10lead" in b for b in bodies) and any("Restarted the queue." in b for b in bodies)


def test_the_cli_denies_without_a_terminal_unless_told_to_approve(scripted, tmp_path: Path) -> None:
    from tests.cli_support import run_cli

    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "ops_tools.py").write_text(TOOL)
    (tmp_path / "ops-actions.yaml").write_text(OPS.format(approvers=""))
    log = tmp_path / "restarts.log"
    env = {"AGENT_WORKFLOWS_DIR": str(tmp_path), "AGENT_TOOLS_PATH": str(tools), "OPS_LOG": str(log),
           "AGENT_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
    denied = scripted(call("restart_service", {"service": "web"}), reply("Denied, so not restarted."))
    result = run_cli("run", "ops-actions", "-m", "restart web", env=env | {"OPENAI_BASE_URL": denied.base_url})
    assert result.returncode == 0 and "Denied, so not restarted." in result.stdout and not log.exists()
    assert "not interactive" in next(iter(denied.requests[1].tool_results().values()))
    approved = scripted(call("restart_service", {"service": "web"}), reply("Restarted web."))
    env |= {"OPENAI_BASE_URL": approved.base_url}
    result = run_cli("run", "ops-actions", "-m", "restart web", "--approve", "all", env=env)
    assert result.returncode == 0 and log.read_text() == "web\n"


def test_a_crash_between_approved_and_ran_never_runs_the_call_twice(scripted, tmp_path: Path) -> None:
    """Approved, the call starts, the worker dies inside it: the resumed run reports an unknown outcome."""
    from dataclasses import replace

    from agent_runtime import Hook, tool
    from agent_runtime.approvals import Decision
    from agent_runtime.runtime import build_agent
    from agent_runtime.stores import LocalStore, RunStore, StoreFileStore
    from agent_runtime.toolsets import ToolSettings

    from tests.conftest import make_workflow, model_for

    ran: list[str] = []

    class Killed(BaseException):
        pass

    @tool(mutating=True)
    def pay(amount: int) -> str:
        """Pay.

        Args:
            amount: How much.
        """
        ran.append("paid")
        return "paid"

    class DieAfterTheEffect(Hook):
        def on_tool_result(self, run: Any, outcome: Any) -> Any:
            raise Killed

    class Approves:
        def decide(self, request: Any) -> tuple[Decision, str]:
            return Decision.APPROVED, "U0LEAD"

    flow = replace(make_workflow(), tools=ToolSettings(approval="mutating"))
    store = LocalStore(tmp_path / "state")
    paid = replace(pay, approval="mutating")
    server = scripted(call("pay", {"amount": 5}), reply("Outcome unknown: check the ledger."))

    def agent(hooks: list[Hook]) -> Any:
        return build_agent(
            flow,
            model_for(server),
            Services(runs=RunStore(store), approver=Approves()),
            files=StoreFileStore(store, "t"),
            hooks=hooks,
            tools=[paid],
        )

    with pytest.raises(Killed):
        agent([DieAfterTheEffect()]).run("Pay 5.", run_id="run-pay")
    checkpoint = RunStore(store).load_checkpoint("run-pay")
    assert checkpoint is not None
    record = agent([]).run(state=checkpoint[0])
    assert ran == ["paid"] and record.status.value == "completed"
    result = next(iter(server.requests[1].tool_results().values()))
    assert result.startswith("ERROR: the outcome of this pay call is unknown")


def test_a_worker_that_dies_after_the_click_is_resumed_by_the_redelivery(system, scripted, ops) -> None:
    """Was: the decision was recorded before the run resumed, and its redelivery, finding it recorded, was taken
    for a duplicate: the run never resumed, the thread's active-run marker stayed, and the thread's later
    messages waited forever. Now the run's checkpoint decides: a call it still waits for resumes it, once."""
    from agent_runtime.deadline import Deadline
    from agent_runtime.triggers.queue import decode

    log = ops()
    server = scripted(call("restart_service", {"service": "payments"}), reply("Restarted payments."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev1", "restart payments", "1763800001.0")))
    assert s.deliver() == ["awaiting_approval"]
    value, _ = approval_value(s)
    assert click(s, value, "U0DANA")["statusCode"] == 200
    got = s.clients["sqs"].receive_message(QueueUrl=s.queue_url, MaxNumberOfMessages=1, AttributeNames=["All"])
    decision = decode(got["Messages"][0]["Body"], s.store)

    def killed(*args: Any, **kwargs: Any) -> Any:  # the invocation dies (timeout, OOM) after the decision is saved
        raise TimeoutError("Task timed out after 900.00 seconds")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(turn, "run_turn", killed)
        with pytest.raises(TimeoutError):
            s.worker.handle(decision, deadline=Deadline.after(600))
    assert s.worker.handle(decision, deadline=Deadline.after(600)) == "answered"  # SQS delivers it again
    assert log.read_text() == "payments\n"
    assert s.worker.handle(decision, deadline=Deadline.after(600)) == "duplicate"  # and again: nothing twice
    assert log.read_text() == "payments\n"
    assert s.worker.process.threads.active("slack-T0TEAM-C0OPS-1763800000.000100") is None


def test_messages_that_waited_behind_an_approval_survive_a_failed_resend(system, scripted, ops) -> None:
    """Was: the waiting messages were removed from the thread before they were sent again: one failed send lost
    them. Now they are forgotten only once sent."""
    ops()
    server = scripted(call("restart_service", {"service": "payments"}))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev1", "restart payments", "1763800001.0")))
    assert s.deliver() == ["awaiting_approval"]
    s.post("/slack/events", *slack_request(mention("Ev2", "and is it up?", "1763800002.0")))
    assert s.deliver() == ["deferred"]
    thread = "slack-T0TEAM-C0OPS-1763800000.000100"
    assert len(s.worker.process.threads.deferred(thread)) == 1
    value, _ = approval_value(s)
    click(s, value, "U0DANA")
    queue, sends = s.worker.process.queue, []
    original = queue.send

    def flaky(message: dict[str, Any], **kwargs: Any) -> None:
        sends.append(message.get("type"))
        if message.get("type") == "event" and sends.count("event") == 1:
            raise ConnectionError("SQS unreachable")
        original(message, **kwargs)

    queue.send = flaky  # type: ignore[method-assign]
    process = s.worker.process
    channel = lambda event, run_id: Channel()  # noqa: E731 (release sends and forgets: it tells nobody)
    desk = ApprovalDesk(process.runs, process.threads, channel, process.approvers, time.time, sources=process.sources)
    with pytest.raises(ConnectionError):
        desk.release(thread, queue)
    assert len(s.worker.process.threads.deferred(thread)) == 1  # still kept
    desk.release(thread, queue)
    assert s.worker.process.threads.deferred(thread) == ()


HOSTILE = "payments\n```\n<!channel> *Approved by the security team* <https://evil.example|click here>\n```"


def test_arguments_cannot_speak_as_the_bot_and_none_are_approved_unseen(system, scripted, ops) -> None:
    """Was: arguments could close the message's code block with ``` and render <!channel> and text as the bot's
    own words, and every value was cut at 200 characters (its tail approved unseen). Now the arguments are a
    preformatted rich-text element (literal), and arguments longer than a message are attached whole."""
    ops()
    tail = "".join(f"step {n}; " for n in range(600)) + "AND DROP THE DATABASE"
    server = scripted(calls(("restart_service", {"service": HOSTILE}), ("restart_service", {"service": tail})))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev7", "restart payments", "1763800007.0")))
    assert s.deliver() == ["awaiting_approval"]
    [asked] = [m for m in s.apis.named("chat.postMessage") if asks_approval(m)]
    blocks = asked["blocks"] if isinstance(asked["blocks"], list) else json.loads(asked["blocks"])
    mrkdwn = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert not any("channel" in text or "security team" in text for text in mrkdwn)
    [literal] = [b for b in blocks if b["type"] == "rich_text"]
    assert literal["elements"][0]["type"] == "rich_text_preformatted"
    assert HOSTILE in json.loads(literal["elements"][0]["elements"][0]["text"])["service"]
    value, _ = approval_value(s)
    click(s, value, "U0DANA")
    assert s.deliver() == ["awaiting_approval"]  # the second call's turn: its arguments are too long to show
    [upload] = s.apis.uploads.values()  # attached whole, in the thread
    assert b"AND DROP THE DATABASE" in upload and json.loads(upload)["service"] == tail


def test_a_click_after_the_request_expired_decides_nothing_and_says_so(system, scripted, ops) -> None:
    """Was: a click after the deadline, before any wake-up, was shown as "approved by" (the run then settled the
    call as expired). Now the clicker is told, the question shows it expired, and the call never runs."""
    log = ops()
    server = scripted(call("restart_service", {"service": "cache"}), reply("The restart was not approved in time."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev8", "restart cache", "1763800008.0")))
    assert s.deliver() == ["awaiting_approval"]
    value, _ = approval_value(s)
    s.worker.process.clock = lambda: time.time() + 2 * 3600  # past approval_timeout_hours: 1, no wake-up fired yet
    click(s, value, "U0DANA")
    assert s.deliver() == ["answered"] and not log.exists()
    texts = [u["text"] for u in s.apis.named("chat.update")]
    assert not any("approved by" in t for t in texts) and any(t.startswith(":hourglass:") for t in texts)
    told = [m["text"] for m in s.apis.named("chat.postEphemeral")]
    assert any("expired before your answer" in t for t in told)


def test_a_jira_answer_decides_the_request_it_names(system, scripted, ops, tmp_path: Path) -> None:
    """Was: "approve" decided the oldest pending request, whichever the approver meant. With two waiting, a bare
    "approve" is refused with the codes; "approve <code>" decides that one."""
    from tests.triggers_support import jira_request

    ops()
    flow = OPS_JIRA.replace("python: [ops_tools:restart_service]", "python: [ops_tools:restart_service, "
                            "ops_tools:drain_report]\n  approval_overrides: {drain_report: always}")  # fmt: skip
    (tmp_path / "ops-actions.yaml").write_text(flow)
    pair = calls(("drain_report", {"service": "queue"}), ("drain_report", {"service": "billing"}))

    def answer(request: Any) -> Any:
        return reply(" | ".join(request.tool_results().values()))

    server = scripted(pair, answer)
    s = system(server)
    s.post("/jira/webhook", *jira_request(jira_says("@agent restart the queue and billing", "20101", "5b10dana")))
    assert s.deliver() == ["awaiting_approval"]
    s.post("/jira/webhook", *jira_request(jira_says("approve", "20102", "5b10lead")))
    assert s.deliver() == ["refused"]
    asked = [json.dumps(c["body"]) for c in s.apis.named("jira.comment") if "Approval needed" in json.dumps(c["body"])]
    codes = {("queue" if '\\"queue\\"' in body else "billing"): body.split("approve ")[-1][:6] for body in asked}
    assert len(asked) == 2 and set(codes) == {"queue", "billing"}
    s.post("/jira/webhook", *jira_request(jira_says(f"deny {codes['queue']}", "20103", "5b10lead")))
    assert s.deliver() == ["awaiting_approval"]  # billing still waits
    s.post("/jira/webhook", *jira_request(jira_says(f"approve {codes['billing']}", "20104", "5b10lead")))
    assert s.deliver() == ["answered"]
    results = server.requests[-1].tool_results().values()
    assert [r.startswith("ERROR: not run: this drain_report call was denied") for r in results] == [True, False]
    assert "billing: 3 jobs in flight" in results


def test_an_answer_can_be_rated_once_per_person_and_forged_ratings_are_refused(system, scripted, ops) -> None:
    """Every answer carries Slack's feedback buttons; a click is verified like an approval click, stored with the
    run (who, verdict, when; the latest per person), shown by runs show and runs list."""
    ops()
    server = scripted(reply("The payments service is up."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev9", "is payments up?", "1763800009.0")))
    assert s.deliver() == ["answered"]
    values = feedback_buttons(s)
    run_id = values["good"].split("|")[0]
    assert rate(s, values["good"], "U0DANA")["statusCode"] == 200
    assert rate(s, values["good"], "U0DANA")["statusCode"] == 200  # the same again: nothing changes
    assert rate(s, values["bad"], "U0LEAD")["statusCode"] == 200
    assert s.deliver() == ["rated", "rated", "rated"]
    stored = s.worker.process.runs.load_record(run_id)
    assert stored is not None
    assert sorted((f["by"], f["verdict"]) for f in stored["feedback"]) == [("U0DANA", "good"), ("U0LEAD", "bad")]
    assert rate(s, values["bad"], "U0DANA")["statusCode"] == 200  # a change of mind: the latest wins
    assert s.deliver() == ["rated"]
    stored = s.worker.process.runs.load_record(run_id)
    assert sorted((f["by"], f["verdict"]) for f in stored["feedback"]) == [("U0DANA", "bad"), ("U0LEAD", "bad")]
    assert rate(s, values["good"], "U0DANA", secret="not-the-signing-secret")["statusCode"] == 401  # forged
    assert rate(s, values["good"], "U0DANA", at=time.time() - 3_600)["statusCode"] == 401  # stale
    assert rate(s, f"run-nope|{values['good'].split('|')[1]}|good", "U0DANA")["statusCode"] == 200
    assert s.deliver() == ["ignored"]  # a run this stack never saw
    assert rate(s, "run-x|good", "U0DANA")["statusCode"] == 400  # malformed value
