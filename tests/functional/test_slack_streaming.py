"""Answers stream into the Slack thread as the model writes them (chat.startStream / appendStream / stopStream),
with each tool call as a task card; a workspace that refuses streams gets the plain post/update path, and is
remembered. Through the webhook, SQS (moto) and the worker, against the fake Slack API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.testing import Paced, ScriptedRequest, reply

from tests.functional.test_approvals_e2e import mention, ops  # noqa: F401  (the fixture)
from tests.functional.test_triggers_e2e import system  # noqa: F401  (the fixture)
from tests.triggers_support import slack_request

ANSWER = "The payments service restarted cleanly. " * 30  # ~1,200 characters: several appends


def chunks(s: Any, method: str) -> list[dict[str, Any]]:
    found = []
    for body in s.apis.named(method):
        raw = body.get("chunks")
        found += json.loads(raw) if isinstance(raw, str) else raw or []
    return found


def streamed_text(s: Any) -> str:
    return "".join(c["text"] for m in ("chat.startStream", "chat.appendStream", "chat.stopStream")
                   for c in chunks(s, m) if c["type"] == "markdown_text")  # fmt: skip


def test_a_plain_answer_streams_and_ends_equal_to_the_answer(system, scripted, ops) -> None:  # noqa: F811
    ops()
    server = scripted(Paced(reply(ANSWER.strip()), interval=0.005))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev2", "is payments up?", "1763800002.0")))
    assert s.deliver() == ["answered"]
    [started] = s.apis.named("chat.startStream")
    assert started["thread_ts"] == "1763800000.000100" and started["recipient_team_id"] == "T0TEAM"
    assert s.apis.named("chat.appendStream")  # in batches, as it was written
    text = streamed_text(s)
    assert text.startswith(ANSWER.strip()), (text[:300], len(text))
    assert "ops-actions workflow" in text  # the footer joins at the end
    [stopped] = s.apis.named("chat.stopStream")
    blocks = json.loads(stopped["blocks"]) if isinstance(stopped["blocks"], str) else stopped["blocks"]
    assert blocks[-1]["type"] == "context_actions"  # the feedback buttons end it
    assert not [u for u in s.apis.named("chat.update") if ANSWER[:40] in str(u.get("text"))]  # not posted twice
    assert s.apis.named("chat.delete")  # the "working" message went when the stream began


def test_text_said_before_tool_calls_is_replaced_by_the_answer(system, scripted, ops, tmp_path: Path) -> None:  # noqa: F811
    from agent_runtime.testing import Reply, ScriptedCall

    ops()
    flow = tmp_path / "ops-actions.yaml"
    flow.write_text(flow.read_text().replace("[ops_tools:restart_service]", "[ops_tools:drain_report]"))
    thinking = Reply(text="Let me check the status page first.", calls=(ScriptedCall("drain_report", {}),))

    def answer(request: ScriptedRequest) -> Any:
        return reply("It is up.")

    server = scripted(thinking, answer)
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev3", "is payments up?", "1763800003.0")))
    assert s.deliver()[-1] == "answered"
    tasks = [c for c in chunks(s, "chat.startStream") + chunks(s, "chat.appendStream") if c["type"] == "task_update"]
    assert [(t["title"], t["status"]) for t in tasks] == [("drain_report", "in_progress"),
                                                          ("drain_report", "error")]  # fmt: skip
    final = [u for u in s.apis.named("chat.update") if "It is up." in str(u.get("text"))]
    assert final and "status page" not in final[-1]["text"]  # the message became the answer itself


def test_a_workspace_that_refuses_streams_gets_the_plain_path_and_is_remembered(system, scripted, ops) -> None:  # noqa: F811
    ops()
    server = scripted(reply("One."), reply("Two."))
    s = system(server)  # streams refused, as by a token that may not stream
    for number, ts in ((4, "1763800004.0"), (5, "1763800005.0")):
        s.post("/slack/events", *slack_request(mention(f"Ev{number}", "hello", ts)))
        assert s.deliver() == ["answered"]
    assert len(s.apis.named("chat.startStream")) == 1  # tried once, then remembered for the workspace
    answers = [u["text"] for u in s.apis.named("chat.update")]
    assert any(a.startswith("One.") for a in answers) and any(a.startswith("Two.") for a in answers)


def test_a_long_answer_under_way_ends_in_its_stream_not_posted_again(system, scripted, ops) -> None:  # noqa: F811
    ops()
    long = "A line of a long report. " * 400  # ~10,000 characters: more than one plain message
    server = scripted(Paced(reply(long.strip()), interval=0.001))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev6", "report", "1763800006.0")))
    assert s.deliver() == ["answered"]
    assert streamed_text(s).startswith(long.strip()) and len(s.apis.named("chat.stopStream")) == 1
    assert not [m for m in s.apis.named("chat.postMessage") if "A line of a long report" in str(m.get("text"))]
