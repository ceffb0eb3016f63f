"""The worker: one queue message → its handler, from the table of handlers (``handlers.py``, one ``on_*.py``
module per kind of message).

Run ids come from the event's dedup key, so a redelivered message finds its run's checkpoint and resumes it (or
sees the reply already posted) instead of starting again. The reply is journalled (posting → posted) in the run's
partition: a redelivery never posts twice; a crash between the two marks leaves at most no reply, logged.
"""

from __future__ import annotations

from typing import Any

from ..deadline import Deadline
from ..triggers.queued import parse
from . import (  # noqa: F401 (their import registers the handlers)
    on_connected,
    on_continue,
    on_decision,
    on_disconnect,
    on_event,
    on_expire,
    on_feedback,
    on_pane,
    on_refused,
    on_stop,
)
from .handlers import Delivery, dispatch
from .outcome import Outcome
from .process import Process
from .unit import Unit

__all__ = ["Process", "Worker"]


class Worker:
    """Sequences one queue message: parsed once, handed to the handler registered for its type. Its services are
    its process's (``worker.process``): a slot of its own, so an attribute set on the worker by mistake fails."""

    __slots__ = ("process",)

    def __init__(self, process: Process) -> None:
        self.process = process

    def handle(self, body: dict[str, Any], *, deadline: Deadline) -> Outcome:
        """A new event, the continuation of a suspended run, a decision on a call that waits for approval, the
        wake-up set for when that request expires, a stop, a rating, the pane, a schedule's tick."""
        return dispatch(Delivery(self.process, parse(body), body, deadline, Unit(self.process.store)))
