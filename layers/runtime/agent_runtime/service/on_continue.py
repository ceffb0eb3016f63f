"""A suspended run's continuation (the deadline came first, or a stop ends a run that is not working): it goes on
from its checkpoint."""

from __future__ import annotations

from ..triggers.queued import ContinueMessage
from . import turn
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(ContinueMessage)
def on_continue(delivery: Delivery[ContinueMessage]) -> Outcome:
    run_id = delivery.message.run_id
    event = delivery.run_event(run_id)
    assert event is not None  # not a click: an unknown run raises
    if delivery.runs.reply_state(run_id) is not None:
        return turn.answered_already(delivery, event, run_id)
    return turn.run_turn(delivery, event, run_id, continuation=True)
