"""Validly signed deliveries built to collide with, or slip past, the webhook's idempotency records: each distinct
delivery is at most one message and never made a duplicate of another, whatever its keys say."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.service.webhook import Webhook, create_app
from agent_runtime.stores import LocalStore
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.idempotency import StorePersistenceLayer
from agent_runtime.triggers.queue import LocalQueue, decode
from agent_runtime.workflows import load_workflow

from tests.surface_support import signed_slack
from tests.triggers_support import ENV, GUARDED, FakeContext, slack_mention, workflows


def local(tmp_path: Path) -> tuple[Webhook, LocalQueue]:
    (tmp_path / "guarded.yaml").write_text(GUARDED)
    store = LocalStore(tmp_path / "state")
    queue = LocalQueue(store)
    flows = [*workflows(), load_workflow("guarded", tmp_path)]
    records = StorePersistenceLayer(store)
    return create_app(TriggerConfig.from_env(ENV), queue=queue, persistence=records, workflows=flows), queue


def deliver(webhook: Webhook, queue: LocalQueue, body: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    answer = webhook.handle(signed_slack("/slack/events", json.dumps(body).encode()), FakeContext())
    sent = []
    while not queue.messages.empty():
        sent.append(decode(queue.messages.get_nowait(), queue.store)["type"])
    return json.loads(answer["body"]), sent


def test_an_event_whose_id_names_another_events_refusal_is_not_that_refusal(tmp_path: Path) -> None:
    """A refusal's record is kept a day: an event id that spells its key ("EvX:refused") is still its own event."""
    webhook, queue = local(tmp_path)
    refused, sent = deliver(webhook, queue, slack_mention("EvX", channel="C0GUARD"))
    assert (refused["status"], sent) == ("refused", ["refused"]), refused
    other, sent = deliver(webhook, queue, slack_mention("EvX:refused"))
    assert (other["status"], sent) == ("queued", ["event"]), other
