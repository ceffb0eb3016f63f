"""Answers stream into the Slack thread as the model writes them (chat.startStream / appendStream / stopStream),
with each tool call as a task card; a workspace that refuses streams gets the plain post/update path, and is
remembered. Through the webhook, SQS (moto) and the worker, against the fake Slack API."""

from __future__ import annotations

import json
from pathlib import Path

from agent_runtime.testing import Paced, reply

from tests.approvals_support import mention
from tests.slack_support import chunks, streamed_text
from tests.triggers_support import slack_request

ANSWER = "The payments service restarted cleanly. " * 30  # ~1,200 characters: several appends


def test_a_plain_answer_streams_and_ends_equal_to_the_answer(system, scripted, ops) -> None:
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


def test_text_said_before_tool_calls_stays_and_the_answer_continues_it(system, scripted, ops, tmp_path: Path) -> None:
    """What was said stays said: the message is the text before the tool call, then the answer — never rewritten
    by chat.update (was: the finished message replaced by the answer as mrkdwn sections)."""
    from agent_runtime.testing import Reply, ScriptedCall

    ops()
    flow = tmp_path / "ops-actions.yaml"
    flow.write_text(flow.read_text().replace("[ops_tools:restart_service]", "[ops_tools:drain_report]"))
    thinking = Reply(text="Let me check the status page first.", calls=(ScriptedCall("drain_report", {}),))
    server = scripted(thinking, reply("It is up."))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev3", "is payments up?", "1763800003.0")))
    assert s.deliver()[-1] == "answered"
    tasks = [c for c in chunks(s, "chat.startStream") + chunks(s, "chat.appendStream") if c["type"] == "task_update"]
    assert [(t["title"], t["status"]) for t in tasks] == [("drain_report", "in_progress"),
                                                          ("drain_report", "error")]  # fmt: skip
    assert streamed_text(s).startswith("Let me check the status page first.\n\nIt is up.\n\n_Answered by the ")
    assert not [u for u in s.apis.named("chat.update") if "It is up." in str(u.get("text"))]  # no rewrite


def test_a_tool_call_before_any_text_streams_the_whole_answer_once(system, scripted, ops, tmp_path: Path) -> None:
    """Streaming x a tool call before any text (the ordinary agent turn): the task card's flush is not text said,
    so the answer streams whole, with no leading blank line and no rewrite (was: 602 of 1,199 characters)."""
    from agent_runtime.testing import Reply, ScriptedCall

    ops()
    flow = tmp_path / "ops-actions.yaml"
    flow.write_text(flow.read_text().replace("[ops_tools:restart_service]", "[ops_tools:drain_report]"))
    server = scripted(Reply(calls=(ScriptedCall("drain_report", {}),)), Paced(reply(ANSWER.strip()), interval=0.002))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev7", "is payments up?", "1763800007.0")))
    assert s.deliver()[-1] == "answered"
    text = streamed_text(s)
    assert text.startswith(ANSWER.strip() + "\n\n_Answered by the "), text[:80]
    assert text.count(ANSWER.strip()) == 1
    assert not [u for u in s.apis.named("chat.update") if ANSWER[:40] in str(u.get("text"))]
    assert not [m for m in s.apis.named("chat.postMessage") if ANSWER[:40] in str(m.get("text"))]


def test_an_answer_at_once_streams_in_chunks_within_slacks_limit(system, scripted, ops, tmp_path: Path) -> None:
    """Streaming x a server that does not stream: a 30,000-character answer arriving in one piece is sent in
    markdown_text chunks of at most 12,000 characters (was: one chunk, refused, and the workspace marked as
    unable to stream until the process restarted)."""
    from agent_runtime.testing import Raw, Reply, ScriptedCall

    ops()
    flow = tmp_path / "ops-actions.yaml"
    flow.write_text(flow.read_text().replace("[ops_tools:restart_service]", "[ops_tools:drain_report]"))
    long = "\n".join(f"Line {n}: the payments service restarted cleanly after the deploy." for n in range(450))
    whole = {"id": "chatcmpl-x", "object": "chat.completion", "created": 0, "model": "gpt-4o",
             "choices": [{"index": 0, "message": {"role": "assistant", "content": long}, "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 100, "completion_tokens": 8000, "total_tokens": 8100}}  # fmt: skip
    server = scripted(Reply(calls=(ScriptedCall("drain_report", {}),)), Raw(whole), reply("Second answer."))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev8", "report", "1763800008.0")))
    assert s.deliver()[-1] == "answered"
    texts = [c["text"] for m in ("chat.startStream", "chat.appendStream") for c in chunks(s, m)
             if c["type"] == "markdown_text"]  # fmt: skip
    assert max(len(t) for t in texts) <= 12_000 and len(texts) >= 3
    assert streamed_text(s).startswith(long)
    s.post("/slack/events", *slack_request(mention("Ev9", "again", "1763800009.0")))
    assert s.deliver()[-1] == "answered"
    assert len(s.apis.named("chat.startStream")) == 2  # the workspace still streams


def test_special_mentions_in_model_text_never_notify(system, scripted, ops) -> None:
    """Model text quoting a document's <!channel> must not page a channel: neutralised in the stream and in the
    plain path, left as written inside fenced code."""
    from agent_runtime.chat.mentions import ZWSP

    ops()
    said = "Heads up <!channel> and <!here>, <!everyone>, <!subteam^S0ONCALL>.\n```\nliteral <!here>\n```"
    server = scripted(Paced(reply(said), interval=0.001), reply(said))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev10", "news?", "1763800010.0")))
    assert s.deliver() == ["answered"]
    text = streamed_text(s)
    for special in ("<!channel>", "<!everyone>", "<!subteam^S0ONCALL>"):
        assert special not in text and special.replace("<", "<" + ZWSP) in text
    assert text.count("<!here>") == 1 and "```\nliteral <!here>\n```" in text  # only inside code
    s.apis.streams = False
    from agent_runtime.chat.stream import forget

    forget()
    s.apis.refuse["chat.startStream"] = "not_allowed_token_type"
    s.post("/slack/events", *slack_request(mention("Ev11", "news?", "1763800011.0")))
    assert s.deliver() == ["answered"]
    plain = [str(u.get("text")) for u in s.apis.named("chat.update") if "Heads up" in str(u.get("text"))]
    assert plain and all("<!channel>" not in t and "<!everyone>" not in t for t in plain)


def test_a_workspace_that_refuses_streams_gets_the_plain_path_and_is_remembered(system, scripted, ops) -> None:
    ops()
    server = scripted(reply("One."), reply("Two."))
    s = system(server)  # streams refused, as by a token that may not stream
    for number, ts in ((4, "1763800004.0"), (5, "1763800005.0")):
        s.post("/slack/events", *slack_request(mention(f"Ev{number}", "hello", ts)))
        assert s.deliver() == ["answered"]
    assert len(s.apis.named("chat.startStream")) == 1  # tried once, then remembered for the workspace
    answers = [u["text"] for u in s.apis.named("chat.update")]
    assert any(a.startswith("One.") for a in answers) and any(a.startswith("Two.") for a in answers)


def test_a_long_answer_under_way_ends_in_its_stream_not_posted_again(system, scripted, ops) -> None:
    ops()
    long = "A line of a long report. " * 400  # ~10,000 characters: more than one plain message
    server = scripted(Paced(reply(long.strip()), interval=0.001))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev6", "report", "1763800006.0")))
    assert s.deliver() == ["answered"]
    assert streamed_text(s).startswith(long.strip()) and len(s.apis.named("chat.stopStream")) == 1
    assert not [m for m in s.apis.named("chat.postMessage") if "A line of a long report" in str(m.get("text"))]
