"""Features where they meet, through the real paths (issue 40, point 4): Slack mention → webhook → SQS (moto
server) → worker → the real ``openai`` client over HTTP to the scripted server → the fake Slack API.

* sub-agent x streaming: a helper's text never streams into the thread; the answer streams whole;
* approval x streaming: a stream closed while a call waits for approval, then the answer streams whole in the
  resumed invocation;
* compaction x streaming: a summary call never streams; the answer does;
* spend limit x an approval wait: what the run spent before it waited still counts after it resumes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply

from tests.approvals_support import approval_value, click, mention
from tests.slack_support import streamed_text
from tests.triggers_support import slack_request

ANSWER = "Payments is healthy: every check passed and the queue is empty. " * 12


def workflow(tmp_path: Path, extra: str) -> None:
    flow = tmp_path / "ops-actions.yaml"
    flow.write_text(flow.read_text().replace("[ops_tools:restart_service]", "[ops_tools:drain_report]") + extra)


def stream_texts(s: Any) -> list[str]:
    """Each stream's markdown text, in the order the streams started."""
    texts: dict[str, str] = {}
    for name, body in s.apis.calls:
        if name not in ("chat.startStream", "chat.appendStream"):
            continue
        raw = body.get("chunks")
        parsed = json.loads(raw) if isinstance(raw, str) else raw or []
        key = f"stream-{len(texts)}" if name == "chat.startStream" else list(texts)[-1]
        texts[key] = texts.get(key, "") + "".join(c["text"] for c in parsed if c["type"] == "markdown_text")
    return list(texts.values())


def test_a_helpers_text_never_streams_and_the_answer_streams_whole(system, scripted, ops, tmp_path: Path) -> None:
    ops()
    workflow(tmp_path, "subagents: {enabled: true}\n")

    def model(request: ScriptedRequest) -> Any:
        if request.system_text().startswith("You are a helper agent"):
            if request.tool_results():
                return reply("HELPER NOTES: drained nothing, three jobs in flight.")
            return call("drain_report", {"service": "payments"})
        if request.tool_results():
            return reply(ANSWER.strip())
        return call("subagent", {"task": "report what draining payments would drop"})

    server = scripted(*[model] * 4)
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev1", "is payments safe to drain?", "1763800001.0")))
    assert s.deliver() == ["answered"]
    text = streamed_text(s)
    assert "HELPER NOTES" not in text
    assert text.startswith(ANSWER.strip() + "\n\n_Answered by the ")
    assert not [u for u in s.apis.named("chat.update") if ANSWER[:30] in str(u.get("text"))]


def test_an_approval_wait_closes_the_stream_and_the_answer_streams_whole_after_it(system, scripted, ops) -> None:
    ops()
    server = scripted(call("restart_service", {"service": "payments"}), reply(ANSWER.strip()))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev2", "restart payments", "1763800002.0")))
    assert s.deliver() == ["awaiting_approval"]
    value, _ = approval_value(s)
    assert click(s, value, "U0DANA")["statusCode"] == 200
    assert s.deliver() == ["answered"]
    last = stream_texts(s)[-1]
    assert last.startswith(ANSWER.strip() + "\n\n_Answered by the "), last[:100]
    assert last.count(ANSWER.strip()) == 1


def test_a_compaction_summary_never_streams(system, scripted, ops, tmp_path: Path) -> None:
    ops()
    workflow(tmp_path, "context: {context_budget: 6000, mask_threshold_tokens: 0}\n")
    from agent_runtime.testing import Reply, ScriptedCall

    asked: list[int] = []

    def model(request: ScriptedRequest) -> Any:
        if request.is_compaction():
            return reply("SUMMARY OF EARLIER TURNS: payments was checked several times.")
        turns = len(asked)
        asked.append(request.index)
        if turns >= 8:
            return reply(ANSWER.strip())
        notes = f"Check {turns}: " + "the payments queue looked steady. " * 60  # ~500 tokens said per turn
        return Reply(text=notes, calls=(ScriptedCall("drain_report", {"service": f"payments-{turns}"}),))

    with ScriptedServer([model] * 30) as server:  # as many steps as compaction takes
        s = system(server)
        s.apis.streams = True
        s.post("/slack/events", *slack_request(mention("Ev3", "check payments again and again", "1763800003.0")))
        assert s.deliver() == ["answered"]
        assert any(r.is_compaction() for r in server.requests)  # it did compact
    text = streamed_text(s)
    assert "SUMMARY OF EARLIER TURNS" not in text
    assert text.count(ANSWER.strip()) == 1 and "\n\n" + ANSWER.strip() + "\n\n_Answered by the " in text
