"""A person's decision on a call that waits for approval: recorded (the first wins; who may decide is checked),
shown where it was asked, and the run resumed."""

from __future__ import annotations

from ..triggers.queued import DecisionMessage
from . import turn
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(DecisionMessage)
def on_decision(delivery: Delivery[DecisionMessage]) -> Outcome:
    run_id = delivery.message.run_id
    event = delivery.run_event(run_id, click=True)
    if event is None:
        return Outcome.IGNORED
    if delivery.runs.reply_state(run_id) is not None:
        delivery.desk.late(event, delivery.message)  # a request its run's end closed (or that expired)
        return turn.answered_already(delivery, event, run_id)
    refused = delivery.desk.record(event, delivery.message)
    return refused or turn.run_turn(delivery, event, run_id, continuation=False)
