"""Triggers and replies: Slack and JIRA webhooks → queue → worker → answers in the thread or on the issue."""

from __future__ import annotations

from .event import Attachment, Challenge, Ignored, TriggerEvent
from .exceptions import RejectedRequest, ReplyError
from .settings import JiraTrigger, SlackTrigger, TriggerSettings

__all__ = [
    "Attachment",
    "Challenge",
    "Ignored",
    "JiraTrigger",
    "RejectedRequest",
    "ReplyError",
    "SlackTrigger",
    "TriggerEvent",
    "TriggerSettings",
]
