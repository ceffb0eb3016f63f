"""The third red team's last two approval findings (issue 41, points 10-11), through the webhook, SQS (moto),
the worker and the fake Slack API:

* a release of the messages that waited behind an approval, cut short by a failed send, is done again by the
  redelivered message (was: found the run answered, returned `duplicate`, and the messages were never answered);
* a worker that dies inside the approved call is resumed by the redelivered decision, and the call's outcome is
  reported unknown, never run twice (was: the "started" checkpoint had settled the approval, so the redelivery
  was a duplicate, the run never resumed and the thread stayed active).
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import pytest
from agent_runtime.deadline import Deadline
from agent_runtime.testing import ScriptedRequest, call, reply
from agent_runtime.triggers.queue import decode

from tests.approvals_support import approval_value, click, mention
from tests.triggers_support import slack_request

THREAD = "slack-T0TEAM-C0OPS-1763800000.000100"


def the_decision(s: Any) -> dict[str, Any]:
    value, _ = approval_value(s)
    assert click(s, value, "U0DANA")["statusCode"] == 200
    got = s.clients["sqs"].receive_message(QueueUrl=s.queue_url, MaxNumberOfMessages=1, AttributeNames=["All"])
    message = got["Messages"][0]
    s.clients["sqs"].delete_message(QueueUrl=s.queue_url, ReceiptHandle=message["ReceiptHandle"])
    return decode(message["Body"], s.store)


def test_a_release_cut_short_is_done_again_by_the_redelivery(system, scripted, ops) -> None:
    ops()

    server = scripted(call("restart_service", {"service": "payments"}), reply("Restarted."), reply("It is up."))
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev1", "restart payments", "1763800001.0")))
    assert s.deliver() == ["awaiting_approval"]
    s.post("/slack/events", *slack_request(mention("Ev2", "and is it up?", "1763800002.0")))
    assert s.deliver() == ["deferred"]
    decision = the_decision(s)
    queue, original = s.worker.process.queue, s.worker.process.queue.send

    def down(message: dict[str, Any], **kwargs: Any) -> None:
        if message.get("type") == "event":
            raise ConnectionError("SQS unreachable")
        original(message, **kwargs)

    queue.send = down
    with pytest.raises(ConnectionError):  # the invocation fails: SQS delivers the decision again
        s.worker.handle(decision, deadline=Deadline.after(600))
    queue.send = original
    assert len(s.worker.process.threads.deferred(THREAD)) == 1
    assert s.worker.handle(decision, deadline=Deadline.after(600)) == "duplicate"  # answered, and released
    assert s.worker.process.threads.deferred(THREAD) == ()
    assert s.deliver() == ["answered"]  # the message that waited is answered
    assert "and is it up?" in json.dumps(server.requests[-1].messages)


def test_a_worker_dying_in_the_approved_call_is_resumed_and_says_unknown(system, scripted, ops, monkeypatch) -> None:
    log = ops()

    class Died(BaseException):  # the invocation ends (a timeout, an OOM kill) while the call runs
        pass

    writes = {"count": 0}
    real = pathlib.Path.write_text

    def dies_once(self: pathlib.Path, *args: Any, **kwargs: Any) -> Any:
        if self == log and writes["count"] == 0:
            writes["count"] += 1
            raise Died
        return real(self, *args, **kwargs)

    def told(request: ScriptedRequest) -> Any:
        result = next(iter(request.tool_results().values()))
        return reply(f"I could not tell whether it restarted: {result[:60]}")

    server = scripted(call("restart_service", {"service": "payments"}), told)
    s = system(server)
    s.post("/slack/events", *slack_request(mention("Ev1", "restart payments", "1763800001.0")))
    assert s.deliver() == ["awaiting_approval"]
    decision = the_decision(s)
    monkeypatch.setattr(pathlib.Path, "write_text", dies_once)
    with pytest.raises(Died):
        s.worker.handle(decision, deadline=Deadline.after(600))
    assert s.worker.handle(decision, deadline=Deadline.after(600)) == "answered"  # SQS delivers it again
    assert not log.exists()  # never run twice (the first write died before it wrote)
    assert "the outcome of this restart_service call is unknown" in server.requests[-1].tool_results().popitem()[1]
    assert s.worker.process.threads.active(THREAD) is None  # the thread is free for its next message
