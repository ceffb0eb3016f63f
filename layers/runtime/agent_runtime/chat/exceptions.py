"""Chat errors: an outbound reply that Slack or JIRA refused."""

from __future__ import annotations

from ..errors import RunError


class ReplyError(RunError):
    """Slack or JIRA refused a reply (after retries on rate limits)."""


class Unreachable(ReplyError):
    """Slack could not be reached (refused, a DNS failure, a timeout), after slack_sdk's retries."""
