"""A valid signature over a hostile payload (the app over moto's SQS and DynamoDB): Slack events, clicks, JIRA
webhooks, /runs calls and signed webhooks whose fields are missing, of the wrong JSON type, the wrong size or not
text are answered (200: queued or ignored, with why; 400: what is malformed), never a 500; what is queued is a
message SQS takes and the worker reads, and the same delivery sent again queues nothing more.

The examples kept are the ones that broke (a 500, or a message SQS or the worker would refuse) before the parsers
read each field by its type: a list as a subtype, a number as the files, a channel that is not an id, half a
UTF-16 pair, JIRA's fields as a string, a click whose user is a string or whose thread id has a space."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.actions import APPROVE, DENY, FEEDBACK, STOP
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import moto_clients
from tests.surface_support import HOSTILE, Surface, api_call, form, signed_hmac, signed_slack, surface
from tests.triggers_support import API_KEY, api_event, jira_comment, jira_request, slack_mention

FAST = settings(max_examples=50, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
FRESH = itertools.count()  # a new id per delivery: Hypothesis runs an example again as it shrinks
SHAPES = {
    "app_mention": {},
    "message": {"type": "message", "channel_type": "im"},
    "reaction_added": {"type": "reaction_added", "reaction": "eyes",
                       "item": {"type": "message", "channel": "C0REVIEW", "ts": "1763800000.000100"}},
    "app_home_opened": {"type": "app_home_opened", "tab": "messages", "channel": "D0PANE"},
    "assistant_thread_started": {"type": "assistant_thread_started", "assistant_thread": {
        "user_id": "U0DANA", "channel_id": "D0PANE", "thread_ts": "1763800000.000200",
        "context": {"channel_id": "C0REVIEW"}}},
}  # fmt: skip
SLACK_FIELDS = ["event.type", "event.user", "event.text", "event.ts", "event.channel", "event.thread_ts",
                "event.subtype", "event.bot_id", "event.channel_type", "event.files", "event.team", "event.item",
                "event.item.channel", "event.item.ts", "event.item.type", "event.reaction", "event.tab",
                "event.assistant_thread", "event.assistant_thread.thread_ts", "event.assistant_thread.channel_id",
                "event_id", "team_id", "authorizations", "type", "event"]  # fmt: skip
JIRA_FIELDS = ["webhookEvent", "timestamp", "comment", "comment.id", "comment.author", "comment.body", "issue",
               "issue.id", "issue.key", "issue.fields", "issue.fields.project", "issue.fields.labels",
               "issue.fields.attachment", "issue.fields.issuetype", "issue.fields.reporter", "user"]  # fmt: skip
CLICK_FIELDS = ["type", "user", "user.id", "trigger_id", "actions", "actions.0", "actions.0.value",
                "actions.0.action_id", "actions.0.action_ts"]  # fmt: skip
RUNS_FIELDS = ["workflow", "message", "request_id", "thread_id"]


@pytest.fixture
def app(moto_endpoint: str, tmp_path: Path, request: pytest.FixtureRequest) -> Surface:
    clients = moto_clients(moto_endpoint, "dynamodb", "sqs", "kms")
    return surface(clients, f"p{abs(hash(request.node.name)) % 10**8}", tmp_path)


def changes(paths: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    """Fields set to any value (None: removed), by their path."""
    return st.dictionaries(st.sampled_from(paths), st.one_of(HOSTILE, st.just(REMOVE)), max_size=3)


REMOVE = object()


def changed(payload: Any, edits: dict[str, Any]) -> Any:
    for path, value in edits.items():
        *parents, last = path.split(".")
        node = payload
        for step in parents:
            node = node[int(step)] if isinstance(node, list) and step.isdigit() and int(step) < len(node) else (
                node.get(step) if isinstance(node, dict) else None)  # fmt: skip
        if isinstance(node, dict) and value is REMOVE:
            node.pop(last, None)
        elif isinstance(node, dict):
            node[last] = value
    return payload


def twice(app: Surface, deliver: Any, *, statuses: frozenset[int], again: bool = True) -> list[Any]:
    """The delivery answered as its route says, and sent again (a retry: signed anew) at once and after its message
    was taken: one message at most. Within SQS's 5-minute window its deduplication drops a repeat (moto's only
    while the first waits); a run's event is also kept out by the idempotency record, for a day."""
    answer, _ = app.answered(deliver(), drain=False)
    assert answer["statusCode"] in statuses, answer["body"][:300]
    if not again:
        return app.drain()
    retried, _ = app.answered(deliver(), drain=False)
    assert retried["statusCode"] == answer["statusCode"], retried["body"][:300]
    sent = app.drain()
    assert len(sent) <= 1 and (not sent or answer["statusCode"] < 300), [s.message.get("type") for s in sent]
    if sent and sent[0].message["type"] == "event":
        late, more = app.answered(deliver())
        assert late["statusCode"] == answer["statusCode"] and more == [], late["body"][:300]
    return sent


@example(kind="app_mention", edits={"event.subtype": []})
@example(kind="app_mention", edits={"event.files": 3})
@example(kind="app_mention", edits={"event.channel": "C 1"})
@example(kind="app_mention", edits={"event.ts": "1" * 300})
@example(kind="app_mention", edits={"team_id": "T é"})
@example(kind="app_mention", edits={"event.text": "a \ud800 b"})
@example(kind="app_mention", edits={"event_id": "E\udc00"})
@example(kind="reaction_added", edits={"event.user": []})
@example(kind="app_mention", edits={"event.text": "x" * 300_000})  # claim-checked: over SQS's 256 KB
@example(
    kind="app_mention",
    edits={
        "event.blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": "b"}}] * 10_000,
        "event.files": [{"url_private": "https://files.slack.com/f"}] * 10_000,
    },
)
@FAST
@given(kind=st.sampled_from(sorted(SHAPES)), edits=changes(SLACK_FIELDS))
def test_a_signed_slack_event_of_any_shape_is_answered_and_queued_at_most_once(
    app: Surface, kind: str, edits: dict[str, Any]
) -> None:
    payload = slack_mention(f"EvP{next(FRESH)}")
    payload["event"] |= SHAPES[kind]
    body = json.dumps(changed(payload, edits)).encode()  # ensure_ascii: half a pair goes as its \u escape
    twice(app, lambda: signed_slack("/slack/events", body), statuses=frozenset({200, 400}))


@st.composite
def clicks(draw: st.DrawFn) -> dict[str, Any]:
    parts = st.sampled_from(["run-0123456789abcdef", "C0REVIEW", "slack-T0-C0-1.2", "call_1", "good", "bad"])
    value = "|".join(draw(st.lists(parts | HOSTILE.map(str), min_size=1, max_size=4)))
    action = {"action_id": draw(st.sampled_from([APPROVE, DENY, STOP, FEEDBACK, "other"])), "value": value,
              "action_ts": "1763800000.1"}  # fmt: skip
    return {"type": "block_actions", "user": {"id": "U0DANA"}, "trigger_id": f"t.{next(FRESH)}", "actions": [action]}


@example(
    click={
        "type": "block_actions",
        "user": "U0DANA",
        "trigger_id": "t.a",
        "actions": [{"action_id": APPROVE, "value": "run-1|call_1|slack-T0-C0-1.2"}],
    },
    edits={},
)
@example(
    click={
        "type": "block_actions",
        "user": {"id": "U0DANA"},
        "trigger_id": "t.b",
        "actions": [{"action_id": STOP, "value": "run 1 é|slack-T0-C0-1.2"}],
    },
    edits={},
)
@example(
    click={
        "type": "block_actions",
        "user": {"id": "U0DANA"},
        "trigger_id": "t.c",
        "actions": [{"action_id": FEEDBACK, "value": f"run-1|slack-T0 {'x' * 200}|good"}],
    },
    edits={},
)
@example(
    click={
        "type": "block_actions",
        "user": {"id": "U0DANA"},
        "trigger_id": "t\ud800",
        "actions": [{"action_id": STOP, "value": "run-1|slack-T0-C0-1.2"}],
    },
    edits={},
)
@FAST
@given(click=clicks(), edits=changes(CLICK_FIELDS))
def test_a_signed_click_of_any_shape_is_answered_and_queued_at_most_once(
    app: Surface, click: dict[str, Any], edits: dict[str, Any]
) -> None:
    body = form(changed(click, edits))
    twice(app, lambda: signed_slack("/slack/interactivity", body), statuses=frozenset({200, 400}))


@example(edits={"issue.fields": "x"})
@example(edits={"issue.fields.project": "x"})
@example(edits={"issue.fields.labels": 3})
@example(edits={"issue.fields.attachment": 7})
@example(edits={"comment.author": "x"})
@example(edits={"webhookEvent": "jira:issue_created", "issue.fields.reporter": "x"})
@example(edits={"webhookEvent": "jira:issue_created", "user": "x", "comment": REMOVE})
@example(edits={"issue.key": "PROJ 1 é" * 50})
@example(edits={"comment.id": {"a": 1}})
@FAST
@given(edits=changes(JIRA_FIELDS))
def test_a_signed_jira_webhook_of_any_shape_is_answered_and_queued_at_most_once(
    app: Surface, edits: dict[str, Any]
) -> None:
    payload = jira_comment(str(next(FRESH)))
    payload["issue"]["id"] = payload["comment"]["id"]
    body, headers = jira_request(json.dumps(changed(payload, edits)).encode())
    twice(app, lambda: api_event("/jira/webhook", body, headers), statuses=frozenset({200, 400, 401}))


@example(edits={"thread_id": "t" * 190})  # a thread SQS takes as a group only by its digest (128 at most)
@example(edits={"message": "\ud800"})
@example(edits={"workflow": "w" * 100_000})
@FAST
@given(edits=changes(RUNS_FIELDS))
def test_a_runs_call_of_any_shape_is_answered_and_queued_once_by_its_request_id(
    app: Surface, edits: dict[str, Any]
) -> None:
    call = changed({"workflow": "design-review", "message": "hi", "request_id": f"r{next(FRESH)}"}, edits)
    request_id = call.get("request_id")
    body = json.dumps(call).encode()
    twice(app, lambda: api_call(body), statuses=frozenset({200, 400}), again=bool(request_id))


@example(run_id="r" * 190)
@FAST
@given(run_id=HOSTILE.map(str))
def test_a_stop_by_the_api_for_any_run_id_is_queued_where_sqs_takes_it_or_refused(app: Surface, run_id: str) -> None:
    path = "/runs/" + run_id.encode("utf-8", "surrogatepass").hex() + "/stop" if run_id else "/runs/-/stop"
    for target in (path, f"/runs/{run_id}/stop"):
        app.answered(api_event(target, b"", {"Authorization": f"Bearer {API_KEY}"}))


@example(body=b'{"title": "\\ud800"}', delivery="d-1")
@FAST
@given(body=st.one_of(HOSTILE.map(lambda v: json.dumps(v).encode()), st.binary(max_size=64)),
       delivery=st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,20}", fullmatch=True))  # fmt: skip
def test_a_signed_webhook_of_any_body_is_answered_and_queued_once(app: Surface, body: bytes, delivery: str) -> None:
    unique = f"{delivery}-{next(FRESH)}"
    stamped = str(int(time.time()))
    twice(app, lambda: signed_hmac("hm", body, unique, stamped), statuses=frozenset({200, 400}))
