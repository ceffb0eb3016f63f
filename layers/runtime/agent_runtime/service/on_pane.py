"""A person at the app's pane in Slack: the thread marked as the pane's, its suggested prompts offered."""

from __future__ import annotations

from ..triggers.queued import PaneMessage
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(PaneMessage)
def on_pane(delivery: Delivery[PaneMessage]) -> Outcome:
    return delivery.pane.opened(delivery.message)
