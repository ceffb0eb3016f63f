"""The wake-up set for when an approval request expires: the requests due are settled as expired and the run goes
on (the model is told); a wake-up that came early is set again."""

from __future__ import annotations

from ..triggers.queued import ExpireMessage
from . import turn
from .approvals import wake_when_expired
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(ExpireMessage)
def on_expire(delivery: Delivery[ExpireMessage]) -> Outcome:
    process, run_id = delivery.process, delivery.message.run_id
    event = delivery.run_event(run_id)
    assert event is not None  # not a click: an unknown run raises
    if delivery.runs.reply_state(run_id) is not None:
        return turn.answered_already(delivery, event, run_id)
    desk = delivery.desk
    waiting = desk.waiting(run_id) or {}
    if not desk.expire(event, run_id, waiting):
        wake_when_expired(process.wakeups, event, run_id, waiting, process.now(), again=True)  # if it still waits
        return Outcome.IGNORED
    return turn.run_turn(delivery, event, run_id, continuation=False)
