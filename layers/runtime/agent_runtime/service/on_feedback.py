"""A person's rating of an answer: stored with the run (one per person, the latest wins), then told to the runs
channel and the metrics. No run moves, so no duplicate check."""

from __future__ import annotations

from ..triggers.queued import FeedbackMessage
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(FeedbackMessage)
def on_feedback(delivery: Delivery[FeedbackMessage]) -> Outcome:
    if delivery.run_event(delivery.message.run_id, click=True) is None:
        return Outcome.IGNORED
    return delivery.answers.rate(delivery.message, then=delivery.reports.rated)
