"""An answer Slack could not take is delivered again soon, not after the queue's visibility timeout (90 minutes on
the stack): the worker's Lambda handling (``service/again.py``, as functions/worker wires it) makes the message
visible after a backoff by its receive count — on SQS (moto), the message comes back after it and not before, and
its redelivery with Slack back posts the answer once. Any other failure keeps the queue's timeout."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from agent_runtime.deadline import Deadline
from agent_runtime.service.again import CAP_SECONDS, backoff, soon_when_unreachable
from agent_runtime.testing import Paced, ScriptedRequest, reply
from agent_runtime.triggers.queue import decode
from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from hypothesis import given
from hypothesis import strategies as st

from tests.approvals_support import mention
from tests.slack_down_support import ANSWER, answers_posted, closed_port
from tests.triggers_support import FakeContext, fake_apis, slack_request, sqs_lambda_event
from tests.worker_support import System

FIRST = 1.0  # the backoff's first wait in these tests (SQS counts whole seconds)
QUIET = Logger(service="test-again")


@given(received=st.integers(-3, 10_000), first=st.floats(0.5, 120))
def test_the_wait_doubles_with_each_receive_up_to_fifteen_minutes(received: int, first: float) -> None:
    wait = backoff(received, first)
    assert 0 < wait <= CAP_SECONDS
    doublings = 2.0 ** min(max(received, 1) - 1, 64)
    assert wait == min(CAP_SECONDS, first * doublings)
    assert backoff(received + 1, first) >= wait  # never sooner for a message that failed more often
    assert backoff(1) == 30.0 and backoff(received) == min(CAP_SECONDS, 30.0 * doublings)


def lambda_batch(s: System, messages: list[dict[str, Any]], fail: Exception | None = None) -> list[str]:
    """The worker's Lambda handling of a batch, as functions/worker/app.py wires it; the messages reported failed.
    ``fail``: raised instead of the worker's handling (a bug)."""

    def handle(record: SQSRecord) -> str:
        received = int(record.attributes.approximate_receive_count or 1)
        with soon_when_unreachable(s.worker.process.queue, record.receipt_handle, received, QUIET, FIRST):
            if fail is not None:
                raise fail
            return s.worker.handle(decode(record.body, s.store), deadline=Deadline.after(600))

    event = sqs_lambda_event(messages)
    try:
        result = process_partial_response(event, handle, SqsFifoPartialProcessor(), FakeContext())
    except BatchProcessingError:  # every message failed
        return [message["MessageId"] for message in messages]
    return [failure["itemIdentifier"] for failure in result["batchItemFailures"]]


def receive(s: System, wait: int = 0) -> list[dict[str, Any]]:
    got = s.clients["sqs"].receive_message(
        QueueUrl=s.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], WaitTimeSeconds=wait
    )
    return list(got.get("Messages", []))


def hidden_for(s: System, seconds: float) -> bool:
    """Nothing visible on the queue for ``seconds`` from now."""
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        if receive(s):
            return False
        time.sleep(0.1)
    return True


def back_after(s: System, seconds: float) -> tuple[list[dict[str, Any]], float]:
    """The messages visible again, and how long after now they came (polled, at most ``seconds`` + 5)."""
    start = time.monotonic()
    while not (got := receive(s)) and time.monotonic() - start < seconds + 5:
        time.sleep(0.1)
    return got, time.monotonic() - start


def slack_down_at_the_answer(system: Callable[..., System], scripted: Any) -> tuple[System, int]:
    down = closed_port()

    def slack_goes_down(request: ScriptedRequest) -> None:  # as the model starts answering
        s.worker.process.replies.slack.client.base_url = f"http://127.0.0.1:{down}/"  # type: ignore[union-attr]

    s = system(scripted(Paced(reply(ANSWER.strip()), interval=0.001), intercept=slack_goes_down))
    s.apis.streams = True  # the answer in one call when Slack is back (answers_posted counts each call's copies)
    s.post("/slack/events", *slack_request(mention("Ev41", "is payments up?", "1763800041.0")))
    return s, down


def test_a_message_slack_could_not_take_is_visible_again_after_the_backoff_and_posts_once(
    system: Callable[..., System], scripted: Any, ops: Any
) -> None:
    ops()
    s, down = slack_down_at_the_answer(system, scripted)
    messages = receive(s)
    assert len(messages) == 1 and lambda_batch(s, messages) == [messages[0]["MessageId"]]
    assert hidden_for(s, FIRST / 2)  # hidden for the backoff (moto's queue timeout is 30 s: not what brings it back)
    again, after = back_after(s, FIRST)
    assert len(again) == 1 and again[0]["Body"] == messages[0]["Body"] and 0.5 < after < FIRST + 4
    assert again[0]["Attributes"]["ApproximateReceiveCount"] == "2"
    assert lambda_batch(s, again) == [again[0]["MessageId"]]  # Slack still down: the second wait is twice the first
    assert hidden_for(s, FIRST + 0.3)  # the second wait: twice the first
    third, _ = back_after(s, 2 * FIRST)
    assert len(third) == 1 and answers_posted(s) == 0
    with fake_apis(down, s.apis):  # Slack is back where it was
        assert lambda_batch(s, third) == []
        assert answers_posted(s) == 1
    assert receive(s) == [] and answers_posted(s) == 1


def test_any_other_failure_keeps_the_queues_timeout(system: Callable[..., System], scripted: Any, ops: Any) -> None:
    ops()
    s = system(scripted())  # the bug fails the message before any run
    s.post("/slack/events", *slack_request(mention("Ev42", "is payments up?", "1763800042.0")))
    messages = receive(s)
    assert len(messages) == 1
    assert lambda_batch(s, messages, fail=RuntimeError("a bug")) == [messages[0]["MessageId"]]
    assert hidden_for(s, FIRST + 1)  # past the backoff: still hidden (the queue's 30 s, then the DLQ path)
