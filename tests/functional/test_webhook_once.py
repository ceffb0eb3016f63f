"""What Slack delivers again after SQS FIFO's 5-minute deduplication window (its last retry comes about 5 minutes
after its first) queues nothing more, for each kind whose repeat a person would see: a run's event, the pane opened
or looked beside, "stop" and "disconnect" written to the app, a refusal by the access rules, a rating. moto forgets a
deduplication id once its message is deleted: draining the queue between deliveries plays the late retry.

And when the queue or the idempotency records are down the answer is 503, a short reason and ``Retry-After``, logged
once, nothing queued nor recorded: the sender's retry, once they are back, queues the delivery once."""

from __future__ import annotations

import itertools
import json
import logging
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import boto3
import pytest
from agent_runtime.actions import APPROVE, FEEDBACK
from agent_runtime.service.webhook import create_app
from agent_runtime.stores import LocalStore
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.idempotency import StorePersistenceLayer, dynamodb_layer
from agent_runtime.triggers.queue import LocalQueue, SqsQueue
from agent_runtime.workflows import load_workflow
from botocore.config import Config
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import moto_clients
from tests.surface_support import SECRETS, WORKFLOWS, Surface, form, signed_slack, surface
from tests.triggers_support import ENV, GUARDED, FakeContext, slack_mention, workflows

FAST = settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
FRESH = itertools.count()
THREAD = {"ts": "1763800000.000300", "thread_ts": "1763800000.000100"}


def pane(kind: str) -> Callable[[str], dict[str, Any]]:
    thread = {"user_id": "U0DANA", "channel_id": "D0PANE", "thread_ts": "1763800000.000200",
              "context": {"channel_id": "C0REVIEW"}}  # fmt: skip
    return lambda key: {**slack_mention(key), "event": {"type": kind, "assistant_thread": thread}}


def said(text: str, **event: Any) -> Callable[[str], dict[str, Any]]:
    return lambda key: slack_mention(key, text=f"<@U0BOT> {text}", **event)


def clicked(action: str, value: str) -> Callable[[str], bytes]:
    click = {"type": "block_actions", "user": {"id": "U0DANA"}, "actions": [{"action_id": action, "value": value}]}
    return lambda key: form({**click, "trigger_id": key})


# Each kind: its delivery by a key of its own, and the message it queues.
EVENTS = {
    "event": (said("please review"), "event"),
    "pane-started": (pane("assistant_thread_started"), "pane"),
    "pane-context": (pane("assistant_thread_context_changed"), "pane"),
    "stop": (said("stop", **THREAD), "stop"),
    "disconnect": (said("disconnect github"), "disconnect"),
    "refused": (said("restart it", channel="C0GUARD"), "refused"),
}
CLICKS = {"feedback": (clicked(FEEDBACK, "run-0123456789abcdef|slack-T0TEAM-C0REVIEW-1.2|bad"), "feedback")}
ONCE = sorted(EVENTS) + sorted(CLICKS)


def delivery(kind: str, key: str, **headers: str) -> dict[str, Any]:
    """The kind's delivery, signed anew (as Slack signs each retry)."""
    if kind in CLICKS:
        return signed_slack("/slack/interactivity", CLICKS[kind][0](key), **headers)
    return signed_slack("/slack/events", json.dumps(EVENTS[kind][0](key)).encode(), **headers)


def queued_as(kind: str) -> str:
    return (EVENTS | CLICKS)[kind][1]


@pytest.fixture
def moto(moto_endpoint: str) -> dict[str, Any]:
    return moto_clients(moto_endpoint, "dynamodb", "sqs", "kms")


@pytest.fixture
def name(request: pytest.FixtureRequest) -> str:
    return f"o{abs(hash(request.node.name)) % 10**8}"


@pytest.fixture
def flows(tmp_path: Path) -> list[Any]:
    (tmp_path / "guarded.yaml").write_text(GUARDED)
    return [*WORKFLOWS, load_workflow("guarded", tmp_path)]


@pytest.fixture
def app(moto: dict[str, Any], name: str, tmp_path: Path, flows: list[Any]) -> Surface:
    return surface(moto, name, tmp_path, workflows=flows)


@FAST
@given(deliveries=st.lists(st.tuples(st.sampled_from(ONCE), st.integers(0, 2)), min_size=1, max_size=8))
def test_each_delivery_is_one_message_however_late_it_comes_again(
    app: Surface, deliveries: list[tuple[str, int]]
) -> None:
    """Deliveries of every kind, some of them again after the previous one's message was taken: one message each,
    of its kind, and every repeat answered 200 (Slack stops retrying)."""
    round_ = next(FRESH)
    queued = []
    for attempt, (kind, number) in enumerate(deliveries):
        retry = {"X-Slack-Retry-Num": "3"} if (kind, number) in deliveries[:attempt] else {}
        answer, sent = app.answered(delivery(kind, f"Ev{kind}-{round_}-{number}", **retry))  # drained: moto forgets
        assert answer["statusCode"] == 200, answer["body"]
        assert [s.message["type"] for s in sent] in ([], [queued_as(kind)]), sent
        queued += [(kind, number)] * len(sent)
    assert sorted(queued) == sorted(set(deliveries))


@pytest.mark.parametrize("kind", ONCE)
def test_a_retry_after_the_queue_window_queues_nothing_more(app: Surface, kind: str) -> None:
    first, sent = app.answered(delivery(kind, f"EvLate-{kind}"))
    assert [s.message["type"] for s in sent] == [queued_as(kind)], first["body"]
    late, more = app.answered(delivery(kind, f"EvLate-{kind}", **{"X-Slack-Retry-Num": "3"}))
    assert late["statusCode"] == 200 and more == [], late["body"]


class Refusing:
    """An endpoint that refuses every connection (bound, never listening): a service that is down."""

    def __init__(self) -> None:
        self.socket = socket.socket()
        self.socket.bind(("127.0.0.1", 0))

    def client(self, service: str) -> Any:
        session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
        config = Config(retries={"mode": "standard", "max_attempts": 1}, connect_timeout=1)
        return session.client(service, endpoint_url=f"http://127.0.0.1:{self.socket.getsockname()[1]}", config=config)


@pytest.fixture
def refusing() -> Iterator[Refusing]:
    down = Refusing()
    yield down
    down.socket.close()


def outage(app: Surface, moto: dict[str, Any], name: str, flows: list[Any], down: str, refusing: Refusing) -> Surface:
    """The same queue and records, reached through a client of ``down`` that is refused."""
    clients = {**moto, down: refusing.client(down)}
    webhook = create_app(
        TriggerConfig.from_env(SECRETS),
        queue=SqsQueue(clients["sqs"], app.url, store=app.store),
        persistence=dynamodb_layer(name, client=clients["dynamodb"]),
        workflows=flows,
    )
    return replace(app, webhook=webhook)


@pytest.mark.parametrize("down", ["sqs", "dynamodb"])
@pytest.mark.parametrize("kind", ONCE)
def test_an_outage_is_a_503_that_queues_nothing_and_its_retry_queues_once(
    app: Surface, moto: dict[str, Any], name: str, flows: list[Any], refusing: Refusing,
    caplog: pytest.LogCaptureFixture, down: str, kind: str,
) -> None:  # fmt: skip
    broken = outage(app, moto, name, flows, down, refusing)
    caplog.clear()
    answer, sent = broken.answered(delivery(kind, f"EvDown-{down}-{kind}"))
    said = json.loads(answer["body"])
    assert (answer["statusCode"], answer["headers"]["Retry-After"], sent) == (503, "60", []), said
    assert said["error"].endswith("is unavailable; retry later"), said
    logged = [(r.getMessage(), r.exc_info) for r in caplog.records if r.levelno >= logging.WARNING]
    assert logged == [("unavailable", None)]  # once, without a traceback
    retried, sent = app.answered(delivery(kind, f"EvDown-{down}-{kind}", **{"X-Slack-Retry-Num": "1"}))
    assert [s.message["type"] for s in sent] == [queued_as(kind)], retried["body"]


def test_a_click_whose_write_is_first_wins_needs_no_record_and_meets_no_store_outage(
    app: Surface, moto: dict[str, Any], name: str, flows: list[Any], refusing: Refusing
) -> None:
    """An approval's click goes by SQS's window only (the worker's write is first-wins): the records being down
    does not stop it; the queue being down is a 503 as for any delivery."""
    approve = clicked(APPROVE, "run-0123456789abcdef|call_1|slack-T0TEAM-C0REVIEW-1.2")
    click = signed_slack("/slack/interactivity", approve("t.approve"))
    answer, sent = outage(app, moto, name, flows, "dynamodb", refusing).answered(click)
    assert answer["statusCode"] == 200 and [s.message["type"] for s in sent] == ["decision"], answer
    answer, sent = outage(app, moto, name, flows, "sqs", refusing).answered(click)
    assert answer["statusCode"] == 503 and sent == [], answer


def test_a_queue_refused_for_another_reason_than_an_outage_is_still_an_error(
    app: Surface, moto: dict[str, Any], name: str
) -> None:
    """No such queue is the deployment's error, not an outage: Lambda's 500 (its error alarm counts it)."""
    gone = SqsQueue(moto["sqs"], app.url.replace(name, f"{name}-gone"), store=app.store)
    records = dynamodb_layer(name, client=moto["dynamodb"])
    webhook = create_app(TriggerConfig.from_env(SECRETS), queue=gone, persistence=records, workflows=WORKFLOWS)
    with pytest.raises(ClientError):
        webhook.handle(delivery("event", "EvGone"), FakeContext())


class Flaky(LocalStore):
    """serve's store, failing the writes that complete or clear a record while ``down``."""

    down = False

    def put_latest(self, *args: Any, **kwargs: Any) -> Any:
        if self.down:
            raise ConnectionError("the store is down")
        return super().put_latest(*args, **kwargs)


class Refused(LocalQueue):
    refusals = 0

    def _send(self, body: str, *, group: str, dedup: str) -> str:
        if self.refusals:
            self.refusals -= 1
            raise ConnectionError("the queue is down")
        return super()._send(body, group=group, dedup=dedup)


def local(tmp_path: Path) -> tuple[Any, Flaky, Refused]:
    store = Flaky(tmp_path / "state")
    queue = Refused(store)
    webhook = create_app(TriggerConfig.from_env(ENV), queue=queue, persistence=StorePersistenceLayer(store),
                         workflows=workflows())  # fmt: skip
    return webhook, store, queue


def test_a_record_left_in_progress_by_a_failed_delivery_is_retried_not_called_a_duplicate(tmp_path: Path) -> None:
    """The queue refused and the record could not be cleared: until it expires with its invocation a retry is told
    to come back (it was "duplicate": the event was lost), after that it is queued, once."""
    webhook, store, queue = local(tmp_path)
    queue.refusals, store.down = 1, True
    body = json.dumps(slack_mention("EvStuck")).encode()
    first = webhook.handle(signed_slack("/slack/events", body), FakeContext(seconds=0.5))
    store.down = False
    again = webhook.handle(signed_slack("/slack/events", body), FakeContext())
    assert (first["statusCode"], again["statusCode"]) == (503, 503), (first, again)
    assert json.loads(again["body"]) == {"error": "the same delivery is being queued now; retry later"}
    assert queue.messages.qsize() == 0
    time.sleep(0.6)
    late = webhook.handle(signed_slack("/slack/events", body), FakeContext())
    assert json.loads(late["body"])["status"] == "queued" and queue.messages.qsize() == 1


def test_a_delivery_queued_whose_record_could_not_be_completed_is_answered_queued(tmp_path: Path) -> None:
    """In the queue is in the queue: a 503 would only bring a retry that could queue it again."""
    webhook, store, queue = local(tmp_path)
    store.down = True
    answer = webhook.handle(signed_slack("/slack/events", json.dumps(slack_mention("EvHalf")).encode()), FakeContext())
    assert json.loads(answer["body"])["status"] == "queued" and queue.messages.qsize() == 1
