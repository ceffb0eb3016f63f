"""The app's own pane in Slack (a direct message with the app, in its agent or assistant view): the workflow's
suggested prompts when a person opens it, an "is working…" status instead of a "working" message (cleared at the
end, on failure and while an approval waits), assistant threads titled after their first message, and the channel
the person has open beside the pane told to the model. Payloads in the shapes of Bolt for Python's own fixtures
(tests/scenario_tests/test_events_assistant.py, test_events_org_apps.py), signed and sent through the webhook,
SQS (moto) and the worker, against the fake Slack API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.chat.pane import WORKING
from agent_runtime.stores import RunStore, ThreadStore
from agent_runtime.testing import Paced, call, reply, server_error

from tests.approvals_support import OPS, TOOL, approval_value, click
from tests.slack_support import DESK, THREAD, messages_tab, pane_message, thread_event
from tests.triggers_support import slack_request


def status(response: dict[str, Any]) -> str:
    return str(json.loads(response["body"])["status"])


def statuses(s: Any) -> list[str]:
    return [c.get("status", "") for c in s.apis.named("assistant.threads.setStatus")]


def test_an_assistant_thread_offers_prompts_shows_a_status_and_knows_the_channel_beside_it(
    system,
    scripted: Any,
    tmp_path: Path,
) -> None:
    (tmp_path / "assistant-desk.yaml").write_text(DESK)
    server = scripted(reply("Two incidents are open."), reply("Both are mitigated."))
    s = system(server)
    assert (
        status(s.post("/slack/events", *slack_request(thread_event("assistant_thread_started", "Ev1", "C0OPS"))))
        == "queued"
    )
    assert s.deliver() == ["noted"]
    [offered] = s.apis.named("assistant.threads.setSuggestedPrompts")
    assert (offered["channel_id"], offered["thread_ts"]) == ("D0APP", THREAD)
    assert offered["prompts"] == [
        {"title": "Summarise the open incidents", "message": "Summarise the open incidents"},
        {"title": "Review a design", "message": "Review the design I attach next"},
    ]
    asked = "What incidents are open right now?"
    s.post("/slack/events", *slack_request(pane_message("Ev2", asked, "1726133700.887259", token=True)))
    assert s.deliver() == ["answered"]
    assert statuses(s)[0] == WORKING and statuses(s)[-1] == ""  # set while it worked, then cleared
    assert {(c["channel_id"], c["thread_ts"]) for c in s.apis.named("assistant.threads.setStatus")} == {
        ("D0APP", THREAD)
    }
    posted = s.apis.named("chat.postMessage")
    assert not [m for m in posted if "Working on it" in str(m.get("text"))]  # the status, not a "working" message
    assert [m["thread_ts"] for m in posted if str(m.get("text")).startswith("Two incidents are open.")] == [THREAD]
    [titled] = s.apis.named("assistant.threads.setTitle")
    assert (titled["channel_id"], titled["thread_ts"], titled["title"]) == ("D0APP", THREAD, asked)
    assert "the person has channel <#C0OPS> open beside this chat" in json.dumps(server.requests[0].messages)

    # The person opens another channel beside the pane, then writes again (this shape carries no assistant_thread).
    assert (
        status(
            s.post("/slack/events", *slack_request(thread_event("assistant_thread_context_changed", "Ev3", "C0BILL")))
        )
        == "queued"
    )
    assert s.deliver() == ["noted"]
    s.post("/slack/events", *slack_request(pane_message("Ev4", "And are they mitigated?", "1726133710.000100")))
    assert s.deliver() == ["answered"]
    last = [m for m in server.requests[1].messages if m["role"] == "user"][-1]
    assert "And are they mitigated?" in json.dumps(last) and "<#C0BILL> open beside this chat" in json.dumps(last)
    assert len(s.apis.named("assistant.threads.setTitle")) == 1  # titled once, after its first message
    assert len(s.apis.named("assistant.threads.setSuggestedPrompts")) == 1  # context changes offer nothing


def test_the_agent_views_messages_tab_gets_the_prompts_for_the_conversation(system, scripted, tmp_path) -> None:
    (tmp_path / "assistant-desk.yaml").write_text(DESK)
    s = system(scripted())
    assert status(s.post("/slack/events", *slack_request(messages_tab("Ev10")))) == "queued"
    assert json.loads(s.post("/slack/events", *slack_request(messages_tab("Ev11", "home")))["body"]) == {
        "status": "ignored", "reason": "the app's Home tab was opened"}  # fmt: skip
    assert s.deliver() == ["noted"]
    [offered] = s.apis.named("assistant.threads.setSuggestedPrompts")
    assert offered["channel_id"] == "D0APP" and "thread_ts" not in offered  # a thread_ts fails silently there
    (tmp_path / "assistant-desk.yaml").write_text(DESK.split("    suggested_prompts:")[0])
    quiet = system(scripted())  # a workflow with no prompts: nothing is queued
    assert json.loads(quiet.post("/slack/events", *slack_request(messages_tab("Ev12")))["body"])["status"] == "ignored"
    assert quiet.deliver() == []


def test_the_status_is_cleared_when_the_run_fails(system, scripted, tmp_path) -> None:
    (tmp_path / "assistant-desk.yaml").write_text(DESK)
    s = system(scripted(server_error(500), server_error(500), server_error(500)))
    s.post("/slack/events", *slack_request(pane_message("Ev20", "hello", "1726133720.0", token=True)))
    assert s.deliver() == ["failed"]
    assert statuses(s)[0] == WORKING and statuses(s)[-1] == ""
    assert any(str(m.get("text")).startswith("Sorry — I could not finish") for m in s.apis.named("chat.postMessage"))


def test_the_status_is_cleared_while_an_approval_waits_and_set_again_when_it_resumes(
    system,
    scripted: Any,
    tmp_path: Path,
    monkeypatch: Any,
) -> None:
    flow = OPS.format(approvers="").replace("slack: {channels: [C0OPS]}", "slack: {direct_messages: true}")
    (tmp_path / "design-review.yaml").unlink()  # the ops workflow takes the direct messages
    (tmp_path / "ops-actions.yaml").write_text(flow)
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "ops_tools.py").write_text(TOOL)
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tools))
    monkeypatch.setenv("OPS_LOG", str(tools / "restarts.log"))
    s = system(scripted(call("restart_service", {"service": "payments"}), reply("Restarted payments.")))
    s.post("/slack/events", *slack_request(pane_message("Ev30", "restart payments", "1726133730.0", token=True)))
    assert s.deliver() == ["awaiting_approval"]
    before = statuses(s)
    assert before[0] == WORKING and before[-1] == ""  # nobody works while the question waits
    value, _ = approval_value(s)
    assert click(s, value, "U0LEAD")["statusCode"] == 200
    assert s.deliver() == ["answered"]
    after = statuses(s)[len(before) :]
    assert after[0] == WORKING and after[-1] == ""  # set again for the resumed run, then cleared
    assert (tools / "restarts.log").read_text() == "payments\n"


def test_an_app_without_the_pane_gets_working_messages_and_is_remembered(system, scripted, tmp_path) -> None:
    (tmp_path / "assistant-desk.yaml").write_text(DESK)
    s = system(scripted(reply("One."), reply("Two.")))
    s.apis.refuse["assistant.threads.setStatus"] = "missing_scope"  # no assistant:write (no agent or assistant view)
    for number, ts in ((40, "1726133740.0"), (41, "1726133741.0")):
        s.post("/slack/events", *slack_request(pane_message(f"Ev{number}", "hi", ts, thread=ts)))
        assert s.deliver() == ["answered"]
    assert len(s.apis.named("assistant.threads.setStatus")) == 1  # refused once, then remembered
    working = [m for m in s.apis.named("chat.postMessage") if "Working on it" in str(m.get("text"))]
    assert len(working) == 2
    answers = [u["text"] for u in s.apis.named("chat.update")]
    assert any(a.startswith("One.") for a in answers) and any(a.startswith("Two.") for a in answers)


def test_stop_written_in_the_pane_stops_the_run_working_there(system, scripted, tmp_path) -> None:
    """The pane shows a status, not a message that could carry a Stop button: "stop" written in the thread is
    the Stop (its own message group: the run holds the thread's). Nothing working: the person is told so."""
    (tmp_path / "assistant-desk.yaml").write_text(DESK)
    seen: dict[str, Any] = {}
    long = "Every incident this quarter, one by one. " * 150

    def stop_while_streaming(request: Any) -> Paced:
        seen["said"] = status(s.post("/slack/events", *slack_request(pane_message("Ev51", "Stop!", "1726133801.0"))))
        seen["stop"] = s.deliver()  # another invocation takes it while the answer streams
        return Paced(reply(long), interval=0.05)

    server = scripted(stop_while_streaming)
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(pane_message("Ev50", "List every incident", "1726133800.0", token=True)))
    outcomes = s.deliver()
    assert seen == {"said": "stop requested", "stop": ["stopped"]}
    assert outcomes[0] == "stopped"
    assert len(server.requests) == 1  # the streamed call was closed: no model call after the stop
    runs = RunStore(s.store)
    [summary] = runs.list_runs(limit=5)
    record = runs.load_record(summary.run_id) or {}
    assert record["status"] == "stopped" and record["stop_reason"] == "Stopped by <@U0DANA>."
    assert ThreadStore(s.store).active(runs.load_event(summary.run_id).thread_id) is None
    assert statuses(s)[0] == WORKING and statuses(s)[-1] == ""  # the status told how, and is cleared

    s.post("/slack/events", *slack_request(pane_message("Ev52", "stop", "1726133802.0")))
    assert s.deliver() == ["ignored"]  # nothing works there now
    [told] = s.apis.named("chat.postEphemeral")
    assert told["user"] == "U0DANA" and "Nothing is working in this thread" in told["text"]
    assert len(server.requests) == 1 and len(runs.list_runs(limit=5)) == 1  # "stop" starts no run
