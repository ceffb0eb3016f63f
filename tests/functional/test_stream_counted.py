"""A streamed answer shows only what counted (issue 50): retries x streaming, the deadline x streaming. Through the
webhook, SQS (moto), the worker, the real ``openai`` client over HTTP to the scripted server (which stalls part way,
as a server that stops answering) and the fake Slack API.

* a model call that fails part way and is retried: the failed attempt's words leave the message, the answer is
  in it once (was: the fragment, then the answer after it, twice over);
* a retry that writes the same words again: the message goes on, nothing is deleted;
* a call the deadline cuts short: the message that showed only its words goes, and the resumed run's answer is
  the only one (was: a message ending mid-word, and the answer again in a new one).
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

from agent_runtime.models import OpenAIChatModel, RetryPolicy
from agent_runtime.testing import Paced, reply

from tests.approvals_support import mention
from tests.slack_support import thread
from tests.triggers_support import slack_request

FRAGMENT = "The payments service is down since the deploy and " * 16  # ~800 characters: flushed before the stall
ANSWER = "Payments is healthy: the restart at 09:12 cleared the queue and every check passed. " * 10


def answers(s: Any, text: str) -> list[str]:
    """The thread's messages that hold ``text``."""
    return [shown for shown in thread(s.apis).values() if text in shown]


def streamed_deletes(s: Any) -> list[str]:
    """The streamed messages that were deleted."""
    posted = [name for name, _ in s.apis.calls if name in ("chat.postMessage", "chat.startStream")]
    streams = {f"1763800100.{n:06d}" for n, name in enumerate(posted, 1) if name == "chat.startStream"}
    return [str(body.get("ts")) for body in s.apis.named("chat.delete") if body.get("ts") in streams]


def retried(build: Any, scripted: Any, failing: str, event: str) -> Any:
    """A question answered after a retry: the first attempt streams ``failing`` and stalls part way (the worker's
    model has a 1.5 s idle timeout, so it fails at the stall and is retried — not before it on a loaded machine,
    where a 0.5 s gap between two chunks cut the fragment before it was shown), the second writes the answer."""
    stalls = Paced(reply(failing), interval=0.001, stall_after=120, stall=30)
    server = scripted(stalls, Paced(reply(ANSWER.strip()), interval=0.001))
    s = build(server)
    s.apis.streams = True
    model = OpenAIChatModel("gpt-4o", client=server.client(), retry=RetryPolicy(3, 0.01, 0.02), timeout=1.5)
    s.worker.process.models = lambda workflow: nullcontext(model)
    s.post("/slack/events", *slack_request(mention(event, "is payments up?", "1763800001.0")))
    assert s.deliver() == ["answered"]
    assert len(server.requests) == 2 and server.abandoned == [0]  # it did fail part way, and was retried
    [final] = answers(s, ANSWER[:40])
    assert final.startswith(ANSWER.strip() + "\n\n_Answered by the ") and final.count(ANSWER.strip()) == 1
    return s


def test_a_call_retried_part_way_shows_the_answer_once_without_the_failed_words(system, scripted, ops) -> None:
    ops()
    s = retried(system, scripted, FRAGMENT + "the rest never comes", "Ev1")
    assert streamed_deletes(s)  # the fragment had been shown: its message went
    assert not answers(s, FRAGMENT[:40])


def test_a_retry_that_writes_the_same_words_goes_on_in_the_same_message(system, scripted, ops) -> None:
    ops()
    s = retried(system, scripted, ANSWER.strip(), "Ev2")
    assert not streamed_deletes(s) and len(s.apis.named("chat.startStream")) == 1


def test_a_call_the_deadline_cuts_leaves_no_message_and_the_answer_comes_once(system, scripted, ops) -> None:
    ops()
    slow = Paced(reply(FRAGMENT * 3), interval=0.01)  # ~450 words at 10 ms: still writing at the deadline
    server = scripted(slow, reply(ANSWER.strip()))
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev3", "is payments up?", "1763800003.0")))
    assert s.deliver(seconds=2.0) == ["suspended", "answered"]  # cut at the deadline, resumed by its continuation
    assert server.abandoned == [0] and streamed_deletes(s)  # the cut call's words had been shown: they went
    assert not answers(s, FRAGMENT[:40])
    [final] = answers(s, ANSWER[:40])
    assert final.startswith(ANSWER.strip() + "\n\n_Answered by the ") and final.count(ANSWER.strip()) == 1
