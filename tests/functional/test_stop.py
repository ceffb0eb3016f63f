"""Stop: a person in the thread presses Stop while the run works (the model streaming its answer), through the
webhook, SQS (moto) and the worker, against the fake Slack API. The click travels in a message group of its own
(the run holds its thread's group), the run ends at its next step — the streaming call is closed — with its state
kept and the thread free for the next message; a forged, foreign or stale click changes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.stores import RunStore, ThreadStore
from agent_runtime.testing import Paced, Reply, ScriptedCall, call, reply

from tests.approvals_support import click, mention
from tests.slack_support import stop_value, streamed_text
from tests.triggers_support import API_KEY, slack_request

LONG = "The payments service is up and its queue drains. " * 120  # slow to stream: the stop comes first


def read_only(tmp_path: Path) -> None:
    flow = tmp_path / "ops-actions.yaml"
    flow.write_text(flow.read_text().replace("[ops_tools:restart_service]", "[ops_tools:drain_report]"))


def test_a_stop_click_during_a_streamed_run_ends_it_within_one_step(system, scripted, ops, tmp_path: Path) -> None:
    ops()
    read_only(tmp_path)
    seen: dict[str, Any] = {}

    def stop_while_streaming(request: Any) -> Paced:
        seen["click"] = click(s, stop_value(s), "U0DANA", action="run_stop")  # the one who asked
        seen["stop"] = s.deliver()  # another invocation takes the click: the run holds its thread's group
        return Paced(reply(LONG), interval=0.05)  # ~20 s of streaming if nothing closed it

    checking = Reply(text="Checking the queue first.", calls=(ScriptedCall("drain_report", {"service": "payments"}),))
    server = scripted(checking, stop_while_streaming)
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev30", "is payments up?", "1763800030.0")))
    outcomes = s.deliver()
    assert seen["click"]["statusCode"] == 200 and seen["stop"] == ["stopped"]
    assert outcomes[0] == "stopped"  # the run itself; then its continuation, a duplicate
    assert len(server.requests) == 2  # within one step: no model call after the stop
    runs, threads = RunStore(s.store), ThreadStore(s.store)
    [summary] = runs.list_runs(limit=5)
    record = runs.load_record(summary.run_id) or {}
    assert record["status"] == "stopped" and record["stop_reason"] == "Stopped by <@U0DANA>."
    assert next(e for e in record["events"] if e["type"] == "stopped")["by"] == "U0DANA"
    assert LONG not in streamed_text(s)  # the streaming call was closed part way
    assert ":octagonal_sign: Stopped by <@U0DANA>." in streamed_text(s)  # said in the thread, for all to see
    thread = runs.load_event(summary.run_id).thread_id
    assert threads.active(thread) is None  # the thread is free
    state, _ = threads.load(thread)
    assert state is not None and any("3 jobs in flight" in str(m.get("content")) for m in state.messages)

    server.add(reply("It is up, and the queue drained."))  # the thread's next message goes on from the stop
    s.post("/slack/events", *slack_request(mention("Ev31", "and now?", "1763800031.0")))
    assert "answered" in s.deliver()
    assert "3 jobs in flight" in json.dumps(server.requests[-1].messages)  # the stopped turn's work is kept


def test_forged_foreign_and_stale_stops_change_nothing(system, scripted, ops, tmp_path: Path) -> None:
    ops()
    read_only(tmp_path)
    seen: dict[str, Any] = {}

    def clicks_that_do_not_stop(request: Any) -> Reply:
        value = stop_value(s)
        seen["forged"] = click(s, value, "U0DANA", action="run_stop", secret="not-the-signing-secret")
        seen["foreign"] = click(s, value, "U0MALLORY", action="run_stop")  # neither the asker nor an approver
        seen["outcomes"] = s.deliver()
        return reply("It is up.")

    checking = Reply(text="Checking.", calls=(ScriptedCall("drain_report", {"service": "payments"}),))
    server = scripted(checking, clicks_that_do_not_stop)
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev32", "is payments up?", "1763800032.0")))
    assert s.deliver() == ["answered"]
    assert seen["forged"]["statusCode"] == 401
    assert seen["outcomes"] == ["refused"]
    [told] = s.apis.named("chat.postEphemeral")
    assert told["user"] == "U0MALLORY" and "Only the person who asked" in told["text"]
    [summary] = RunStore(s.store).list_runs(limit=5)
    assert summary.status == "completed" and RunStore(s.store).stop_request(summary.run_id) is None

    stale = click(s, stop_value(s), "U0DANA", action="run_stop")  # after the answer
    assert stale["statusCode"] == 200 and s.deliver() == ["ignored"]
    assert RunStore(s.store).stop_request(summary.run_id) is None


def test_the_api_stops_a_run_that_waits_for_an_approval_and_the_call_never_runs(system, scripted, ops) -> None:
    """Stop x approvals: a run waiting for a decision is not working, so the stop's continuation ends it; its
    pending call is answered "not run" (no orphan, never run on the thread's next turn)."""
    log = ops()
    server = scripted(Reply(calls=(ScriptedCall("restart_service", {"service": "payments"}),)))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev33", "restart payments", "1763800033.0")))
    assert s.deliver() == ["awaiting_approval"]
    [summary] = RunStore(s.store).list_runs(limit=5)
    run_id = summary.run_id
    assert s.post(f"/runs/{run_id}/stop", b"", {"Authorization": "Bearer wrong"})["statusCode"] == 401
    assert s.post("/runs/bad id!/stop", b"", {"Authorization": f"Bearer {API_KEY}"})["statusCode"] in (400, 404)
    asked = s.post(f"/runs/{run_id}/stop", b"", {"Authorization": f"Bearer {API_KEY}"})
    assert asked["statusCode"] == 202
    assert s.deliver() == ["stopped", "stopped"]  # the request written; then the run's continuation ends it
    record = RunStore(s.store).load_record(run_id) or {}
    assert record["status"] == "stopped" and "api:api-key" in record["stop_reason"]
    assert not log.exists()  # the restart waiting for approval never ran
    state, _ = ThreadStore(s.store).load(RunStore(s.store).load_event(run_id).thread_id)
    results = [m for m in state.messages if m["role"] == "tool"] if state else []
    assert [r["content"] for r in results] == ["Not run: the run was stopped by api:api-key before this call."]


def test_runs_stop_asks_a_stored_run_and_refuses_one_that_ended(tmp_path: Path) -> None:
    from agent_runtime.record import RunRecord, RunState, RunStatus
    from agent_runtime.stores import LocalStore

    from tests.cli_support import run_cli

    runs = RunStore(LocalStore(tmp_path))
    runs.save_checkpoint(RunState("run-working", "w", [{"role": "user", "content": "go"}]), expected_version=None)
    runs.save_record(RunRecord("run-done", "w", "gpt-4o", status=RunStatus.COMPLETED))
    runs.save_record(RunRecord("run-waits", "w", "gpt-4o", status=RunStatus.SUSPENDED))
    env = {"AGENT_STATE_DIR": str(tmp_path)}
    waits = run_cli("runs", "stop", "run-waits", env=env)  # between invocations, and no queue to wake it
    assert waits.returncode == 0 and "nothing is listening (suspended): it ends when it is resumed" in waits.stdout
    asked = run_cli("runs", "stop", "run-working", env=env)
    assert asked.returncode == 0 and "ends at its next step" in asked.stdout
    assert (stop := runs.stop_request("run-working")) is not None and stop.via == "cli"
    assert "already asked" in run_cli("runs", "stop", "run-working", env=env).stdout
    ended = run_cli("runs", "stop", "run-done", env=env)
    assert ended.returncode == 1 and "has ended (completed)" in ended.stderr
    assert runs.stop_request("run-done") is None
    assert run_cli("runs", "stop", "run-nobody", env=env).returncode == 2


def test_a_stop_ends_a_helper_at_its_next_step_and_its_parent_with_it(scripted) -> None:
    """Stop x sub-agents: the helper runs under its parent's stop check; a stop asked while the helper works
    ends the helper at its next step, then the parent, whose call is answered — no model call after either."""
    from agent_runtime import RunStatus
    from agent_runtime.files import InMemoryFileStore
    from agent_runtime.stopping import StopRequest

    from tests.subagents_support import child_script, parent

    asked: list[StopRequest] = []

    def stop_after_first_read(request: Any) -> Any:
        asked.append(StopRequest("U0DANA", 1.0, "slack"))  # pressed while the helper works
        return call("file_read", {"id": doc.id, "start_line": 1, "end_line": 2})

    files = InMemoryFileStore()
    doc = files.put(b"a\nb\nc\n", name="notes.txt")
    child = child_script(call("file_read", {"id": doc.id}), stop_after_first_read)
    server = scripted(call("subagent", {"task": "read notes.txt"}), intercept=child)
    record = parent(server, files).run("Summarise notes.txt", stop=lambda: asked[0] if asked else None)
    assert record.status is RunStatus.STOPPED and record.stop_reason == "Stopped by <@U0DANA>."
    [helper] = record.children
    assert helper["status"] == "stopped" and not child.queue  # the helper asked twice, then stopped
    assert len(server.requests) == 3  # parent once, helper twice; nothing after the stop


def test_stop_written_in_the_thread_a_reaction_answers_in_stops_its_run(system, scripted, tmp_path: Path) -> None:
    """Issue 49: a reaction's run keeps a thread of its own (one per message and emoji), so "stop" written in the
    Slack thread it answers in found nothing; the run is named the newest of that thread too."""
    from tests.slack_support import FLOW, PARENT, REPLY, reaction

    (tmp_path / "jira-draft.yaml").write_text(FLOW)
    seen: dict[str, Any] = {}

    def stop_while_streaming(request: Any) -> Paced:  # "@agent stop" in the message's thread, by the one who reacted
        s.post("/slack/events", *slack_request(mention("Ev47", "stop", "1763800060.000100")))
        seen["stop"] = s.deliver()
        return Paced(reply(LONG), interval=0.05)

    server = scripted(stop_while_streaming)
    s = system(server)
    s.apis.streams = True
    s.apis.threads[PARENT] = [
        {"ts": PARENT, "user": "U0ERIN", "text": "Anyone seen the consumer lose messages?"},
        {"ts": REPLY, "thread_ts": PARENT, "user": "U0ERIN", "text": "It drops them on retry."},
    ]
    s.post("/slack/events", *slack_request(reaction("Ev46")))
    assert s.deliver()[0] == "stopped" and seen["stop"] == ["stopped"]
    assert len(server.requests) == 1  # the streamed call was closed: no model call after the stop
    [summary] = RunStore(s.store).list_runs(limit=5)
    assert (RunStore(s.store).load_record(summary.run_id) or {})["stop_reason"] == "Stopped by <@U0DANA>."
