"""The one place that maps an event's source to its chat surface."""

from __future__ import annotations

from ..stores import RunStore
from ..triggers.event import TriggerEvent
from .channels import Channel, JiraChannel, Replies, SlackChannel
from .pane import PaneChannel


def channel_for(event: TriggerEvent, replies: Replies, runs: RunStore, run_id: str) -> Channel:
    """A Slack thread (a direct message with the app: its pane), a JIRA issue, or nowhere (a /runs request)."""
    target = dict(event.reply_to)
    facts = event.attributes
    if event.source == "slack" and replies.slack is not None:
        team, user = str(facts.get("team") or "") or None, event.user or None
        if facts.get("direct_message"):
            return PaneChannel(replies.slack, target, runs, run_id, event.thread_id, team=team, user=user,
                               assistant_thread=bool(facts.get("assistant_thread")))  # fmt: skip
        return SlackChannel(replies.slack, target, runs, run_id, event.thread_id, team=team, user=user)
    if event.source == "jira" and replies.jira is not None:
        return JiraChannel(replies.jira, target["issue_key"])
    if event.source == "schedule":  # its answer_to: a Slack channel (a message of its own), a JIRA issue, the record
        if "channel" in target and replies.slack is not None:  # its working message has a Stop, as any run's
            return SlackChannel(replies.slack, target, runs, run_id, event.thread_id, user=None)
        if "issue_key" in target and replies.jira is not None:
            return JiraChannel(replies.jira, target["issue_key"])
    channel = Channel()
    channel.name = event.source
    return channel
