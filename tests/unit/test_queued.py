"""Queue messages, typed: each kind's body parses back to itself; anything else is an InvalidMessageError that
says what is wrong (the worker reports it, and the message goes to the dead-letter queue, not a traceback)."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from agent_runtime.inbound import PaneEvent
from agent_runtime.triggers import TriggerEvent
from agent_runtime.triggers.exceptions import InvalidMessageError
from agent_runtime.triggers.queued import (
    ConnectedMessage,
    ContinueMessage,
    DecisionMessage,
    DisconnectMessage,
    EventMessage,
    ExpireMessage,
    FeedbackMessage,
    PaneMessage,
    QueueMessage,
    RefusedMessage,
    StopMessage,
    TickMessage,
    parse,
)
from hypothesis import given, settings
from hypothesis import strategies as st

EVENT = TriggerEvent(source="slack", kind="app_mention", dedup_key="slack:Ev1", text="hi", user="U0DANA",
                     thread_id="slack-T0-C0-1.0", correlation_id="Ev1", workflow="slack-helper")  # fmt: skip


MESSAGES = [
    EventMessage(EVENT),
    EventMessage(EVENT, {"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}),
    ContinueMessage("run-1", "slack-T0-C0-1.0", 2),
    ContinueMessage("run-1", None, 1),
    DecisionMessage("run-1", "call_7", "approved", "U0LEAD"),
    ExpireMessage("run-1", "run-1:1763800000.0"),
    FeedbackMessage("run-1", "good", "U0DANA"),
    FeedbackMessage("run-1", "bad", "U0DANA", "dana"),  # with the name the click gave
    PaneMessage(PaneEvent("opened", "slack:Ev2", "T0", "D0APP", "U0DANA"), "slack-helper"),
    PaneMessage(PaneEvent("context", "slack:Ev3", "T0", "D0APP", "U0DANA", "1.0", "C0OPS"), "slack-helper"),
    StopMessage("run-1", "U0DANA", "slack"),
    StopMessage("", "U0DANA", "slack", said=EVENT),
    StopMessage("run-1", "", "api"),
    TickMessage("nightly-report", "schedule-1", "2026-11-27T06:00:00Z"),
    RefusedMessage(EVENT, "you are not in oncall, the groups access.start lets in"),
    ConnectedMessage("run-1", "github", "slack:U0DANA", "connected", "n0nce"),
    ConnectedMessage("run-1", "github", "slack:U0DANA", "denied", "n0nce2"),
    DisconnectMessage(EVENT, "github"),
]


@pytest.mark.parametrize("message", MESSAGES)
def test_every_kind_parses_back_to_itself_through_json(message: Any) -> None:
    assert parse(json.loads(json.dumps(message.body()))) == message


def test_every_kind_is_tried_above_and_has_one_handler_in_the_worker() -> None:
    from agent_runtime.service.handlers import HANDLERS
    from agent_runtime.service.worker import Worker  # noqa: F401 (its import registers the handlers)

    kinds = set(get_args(QueueMessage))
    assert {type(message) for message in MESSAGES} == kinds
    assert set(HANDLERS) == kinds


@pytest.mark.parametrize(
    ("body", "why"),
    [
        ([], "must be a JSON object"),
        ({"run_id": "r"}, "unknown message type None"),
        ({"type": "launch"}, "unknown message type 'launch'"),
        ({"type": "continue"}, "a continue message without 'run_id'"),
        ({"type": "decision", "run_id": "r", "call_id": "c", "decision": "maybe", "user": "U"}, "unknown decision"),
        ({"type": "event", "event": {"source": "slack", "surprise": 1}}, "a malformed event message"),
        ({"type": "continue", "run_id": "r", "continuation": "many"}, "a malformed continue message"),
        ({"type": "pane", "event": {"kind": "opened"}, "workflow": "w"}, "a malformed pane message"),
        ({"type": "pane", "event": {}}, "a pane message without 'workflow'"),
        ({"type": "disconnect", "event": EVENT.to_dict()}, "a disconnect message without 'provider'"),
    ],
)
def test_anything_else_is_refused_with_why(body: Any, why: str) -> None:
    with pytest.raises(InvalidMessageError, match=why):
        parse(body)


PEOPLE = st.one_of(
    st.none(),
    st.text(max_size=5),
    st.fixed_dictionaries(
        {"id": st.just("U0DANA")},
        optional={k: st.one_of(st.none(), st.integers(), st.text(max_size=200)) for k in ("name", "username")},
    ),
)


@settings(max_examples=60, deadline=None)
@given(person=PEOPLE)
def test_a_ratings_name_is_the_clicks_user_name_or_nothing(person: Any) -> None:
    """Whatever ``user`` a feedback click carries, its message keeps the ``name`` (else ``username``), stripped and
    at most 80 characters, or none; a click without the user's id is refused (400), never an error."""
    import urllib.parse

    from agent_runtime.actions import FEEDBACK
    from agent_runtime.triggers.exceptions import RejectedRequest
    from agent_runtime.triggers.slack import parse_action

    click = {"type": "feedback_buttons", "action_id": FEEDBACK, "value": "run-1|slack-T0-C0-1.0|good"}
    payload = {"type": "block_actions", "user": person, "trigger_id": "1.2.x", "actions": [click]}
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    if not isinstance(person, dict):
        with pytest.raises(RejectedRequest):
            parse_action(body)
        return
    message = parse(parse_action(body).message)  # type: ignore[union-attr]
    names = [v.strip() for v in (person.get("name"), person.get("username")) if isinstance(v, str) and v.strip()]
    assert isinstance(message, FeedbackMessage) and message.name == (names[0][:80] if names else "")
