"""What comes in: Slack and JIRA webhooks and /runs, verified, deduplicated and queued (typed messages).

The layers read top-down: ``service`` (the worker, serve, wake-ups) uses ``runtime``, ``chat`` (how answers go
out: Slack and JIRA clients, formatting) and this package; a workflow's ``triggers:`` section is parsed in
``workflows.triggers``, below all of them."""

from __future__ import annotations

from ..inbound import Attachment, Challenge, Ignored, TriggerEvent
from .exceptions import RejectedRequest

__all__ = [
    "Attachment",
    "Challenge",
    "Ignored",
    "RejectedRequest",
    "TriggerEvent",
]
