"""A request to stop a run: a click on its Stop button, the /runs API, or "stop" written in its thread. It comes
in a message group of its own: the run it stops may be working right now (see ``stops``)."""

from __future__ import annotations

from ..triggers.queued import StopMessage
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(StopMessage)
def on_stop(delivery: Delivery[StopMessage]) -> Outcome:
    message, stops = delivery.message, delivery.stops
    if not message.run_id:
        return stops.said(message)  # "stop" written in a thread: the run working there, if any
    event = delivery.run_event(message.run_id, click=True)
    return Outcome.IGNORED if event is None else stops.asked(message, event)
