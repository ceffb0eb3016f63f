"""Slack out of reach while a run streams its answer (nothing listening where Slack was: a port bound, then
closed): the stream ends at the first call that cannot reach Slack — a bounded number of calls, however long the
answer — the run ends, its answer is kept (the record, the reply's claim), and the message is delivered again; once
Slack is back on that port, the redelivery posts the answer, once, and a later one posts nothing. Through
slack_sdk's real WebClient (the worker's retry handlers, their waits shortened) and, end to end, the webhook, SQS
(moto) and the worker's Lambda batch handling."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from typing import Any

from agent_runtime.chat.replies import SlackReplier
from agent_runtime.chat.stream import AnswerStream, forget
from agent_runtime.deadline import Deadline
from agent_runtime.stores import RunStore, ThreadStore
from agent_runtime.testing import Paced, ScriptedRequest, reply
from agent_runtime.triggers.queue import decode
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_interval_calculators import FixedValueRetryIntervalCalculator

from tests.approvals_support import mention
from tests.slack_down_support import ANSWER, answers_posted, closed_port
from tests.triggers_support import FakeContext, fake_apis, slack_request, sqs_lambda_event
from tests.worker_support import System


def counted(client: WebClient) -> Counter[str]:
    """The Web API methods ``client`` calls from now on, by name (each after slack_sdk's own retries); its retry
    handlers wait 10 ms, not seconds (how many attempts each makes is theirs)."""
    calls: Counter[str] = Counter()
    call = client.api_call

    def api_call(method: str, **arguments: Any) -> Any:
        calls[method] += 1
        return call(method, **arguments)

    client.api_call = api_call  # type: ignore[method-assign]
    for handler in client.retry_handlers:
        handler.interval_calculator = FixedValueRetryIntervalCalculator(0.01)
    return calls


shape = st.lists(
    st.one_of(st.text(min_size=1, max_size=900), st.sampled_from(["task", "call", "tick"])), min_size=1, max_size=30
)


@settings(max_examples=15, deadline=None)
@given(steps=shape, answer=st.text(max_size=3_000))
def test_a_stream_whose_slack_is_unreachable_makes_one_call_and_leaves_the_answer_to_the_plain_post(
    steps: list[str], answer: str
) -> None:
    """Whatever the model writes (text in any batches, tool calls, time passing), a stream that cannot reach Slack
    calls it once at most (was: chat.startStream again for every batch), and says the answer is not in it."""
    forget()
    client = SlackReplier("xoxb-test", base_url=f"http://127.0.0.1:{closed_port()}/").client
    calls = counted(client)
    now = [0.0]
    stream = AnswerStream(client, channel="C0OPS", thread_ts="1.0", team="T0", user="U0", clock=lambda: now[0])
    stream.new_call()
    for number, step in enumerate(steps):
        if step == "task":
            stream.task(f"call-{number}", "restart_service", "in_progress")
        elif step == "call":
            stream.settle(stream.said)
            stream.new_call()
        elif step == "tick":
            now[0] += 2.0  # past the flush interval
        else:
            stream.text(step)
    assert stream.finish(answer, None) is False  # the caller posts it the plain way
    stream.close()
    assert sum(calls.values()) <= 1, calls
    assert not stream.started
    assert stream.broken == bool(calls) and stream.usable == (not calls)  # nothing said (no call): nothing broke


def lambda_batch(s: System, messages: list[dict[str, Any]]) -> tuple[list[str], list[str]]:
    """The worker's Lambda handling of one batch (as functions/worker does): the outcomes, and the messages it
    reports failed (the queue delivers those again)."""
    outcomes: list[str] = []

    def handle(record: Any) -> str:
        outcomes.append(s.worker.handle(decode(record.body, s.store), deadline=Deadline.after(600)))
        return outcomes[-1]

    try:
        result = process_partial_response(
            event=sqs_lambda_event(messages),
            record_handler=handle,
            processor=SqsFifoPartialProcessor(),
            context=FakeContext(),
        )
    except BatchProcessingError:  # every message failed: the invocation fails, the queue delivers them all again
        return outcomes, [message["MessageId"] for message in messages]
    return outcomes, [failure["itemIdentifier"] for failure in result["batchItemFailures"]]


def test_a_streaming_run_whose_slack_goes_down_ends_and_its_redelivery_posts_the_answer_once(
    system: Callable[..., System], scripted: Any, ops: Any
) -> None:
    ops()
    down = closed_port()
    outage: list[Counter[str]] = []

    def slack_goes_down(request: ScriptedRequest) -> None:  # as the model starts answering
        client = s.worker.process.replies.slack.client  # type: ignore[union-attr]
        client.base_url = f"http://127.0.0.1:{down}/"
        outage.append(counted(client))

    s = system(scripted(Paced(reply(ANSWER.strip()), interval=0.001), intercept=slack_goes_down))
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention("Ev40", "is payments up?", "1763800040.0")))
    got = s.clients["sqs"].receive_message(QueueUrl=s.queue_url, MaxNumberOfMessages=10, AttributeNames=["All"])
    messages = got["Messages"]
    assert len(messages) == 1

    outcomes, failed = lambda_batch(s, messages)
    assert outcomes == [] and failed == [messages[0]["MessageId"]]  # the run ended; the queue tries it again
    [calls] = outage
    assert calls["chat.startStream"] == 1 and calls["chat.appendStream"] == 0, calls
    assert sum(calls.values()) <= 5 and max(calls.values()) <= 2, calls  # not one for every batch of text
    [row] = RunStore(s.store).list_runs()
    record = RunStore(s.store).load_record(row.run_id)
    assert record is not None and record["status"] == "completed"
    assert record["final_answer"] == ANSWER.strip()
    claim = RunStore(s.store).reply_claim(row.run_id)
    assert claim is not None and claim.state == "posting" and ANSWER.strip() in claim.text
    assert answers_posted(s) == 0
    state, _ = ThreadStore(s.store).load(str(row.thread_id))  # the thread's next turn goes on from this one
    assert state is not None and "ticket 4711" in json.dumps(state.to_dict())

    outcomes, failed = lambda_batch(s, messages)  # delivered again while Slack is still down: tried again later
    assert outcomes == [] and failed == [messages[0]["MessageId"]]
    assert answers_posted(s) == 0 and RunStore(s.store).reply_state(row.run_id) == "posting"

    with fake_apis(down, s.apis):  # Slack is back where it was
        outcomes, failed = lambda_batch(s, messages)
        assert (outcomes, failed) == (["duplicate"], [])
        assert answers_posted(s) == 1
        assert RunStore(s.store).reply_state(row.run_id) == "posted"
        outcomes, failed = lambda_batch(s, messages)  # delivered once more: nothing more is posted
        assert (outcomes, failed) == (["duplicate"], [])
        assert answers_posted(s) == 1
