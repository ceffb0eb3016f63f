"""What a trigger source may use of chat (``sources.Chat``): the surfaces a run answers on — a Slack thread, the
app's pane, a JIRA issue, or nowhere — each made only where the deployment has its credentials, and the Slack
reads a source needs before its run starts. Sources sit below chat: the worker hands this to them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..stores import RunStore
from .channels import Channel, JiraChannel, Replies, SlackChannel
from .exceptions import ReplyError
from .pane import PaneChannel
from .replies import JiraReplier, SlackReplier


class Surfaces:
    def __init__(self, replies: Replies, runs: RunStore) -> None:
        self.replies, self.runs = replies, runs

    @property
    def slack(self) -> SlackReplier | None:
        return self.replies.slack

    @property
    def jira(self) -> JiraReplier | None:
        return self.replies.jira

    def thread(
        self, target: Mapping[str, str], thread_id: str, run_id: str, *, team: str | None, user: str | None
    ) -> Channel | None:
        """A Slack thread (a channel's message of its own when ``thread_ts`` is empty)."""
        if self.replies.slack is None:
            return None
        return SlackChannel(self.replies.slack, dict(target), self.runs, run_id, thread_id, team=team, user=user)

    def pane(
        self, target: Mapping[str, str], thread_id: str, run_id: str, *, team: str | None, user: str | None,
        assistant_thread: bool,
    ) -> Channel | None:  # fmt: skip
        """A direct message with the app (its agent or assistant view)."""
        if self.replies.slack is None:
            return None
        return PaneChannel(self.replies.slack, dict(target), self.runs, run_id, thread_id, team=team, user=user,
                           assistant_thread=assistant_thread)  # fmt: skip

    def issue(self, issue_key: str) -> Channel | None:
        return JiraChannel(self.replies.jira, issue_key) if self.replies.jira is not None else None

    def nowhere(self, name: str) -> Channel:
        """No chat surface (started by name, or its surface has no credentials here): ``name`` says which."""
        channel = Channel()
        channel.name = name
        return channel

    def reacted(self, channel: str, ts: str) -> Mapping[str, Any]:
        """The message a reaction was added to; ``ReplyError`` when it cannot be read (no Slack credentials, Slack
        unreachable, ``reactions.get`` refused: the reactions:read scope)."""
        if self.replies.slack is None:
            raise ReplyError("the message reacted to could not be read: no Slack credentials")
        try:
            return self.replies.slack.reacted(channel, ts)
        except ReplyError as error:
            raise ReplyError(f"the message reacted to could not be read: {error}") from None

    def is_private(self, channel: str) -> bool:
        """Whether only some people see ``channel``; unknown (no Slack credentials) counts as private."""
        return self.replies.slack.is_private(channel) if self.replies.slack is not None else True
