"""Slack's pane (the split view of an assistant thread): marked and offered the workflow's suggested prompts when
opened; a direct message written there is framed as the pane's, with the channel the person has open beside it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from aws_lambda_powertools import Logger

from ..chat.channels import Replies
from ..chat.exceptions import ReplyError
from ..errors import AgentRuntimeError
from ..stores import ThreadStore
from ..stores.items import Pane as PaneItem
from ..triggers.event import TriggerEvent
from ..triggers.queued import PaneMessage
from ..workflows import Workflow
from .outcome import Outcome


class Pane:
    def __init__(self, threads: ThreadStore, replies: Replies, named: Callable[[str], Workflow], log: Logger) -> None:
        self.threads, self.replies, self.named, self.log = threads, replies, named, log

    def opened(self, message: PaneMessage) -> Outcome:
        """An assistant thread is marked as one (with the channel the person looks at beside it); opened, it
        offers the workflow's suggested prompts. Cosmetic: a refusal is logged, never retried."""
        pane = message.event
        if pane.thread_ts is not None:
            self.threads.save_pane(pane.thread_id, PaneItem(pane.user, pane.viewing))
        if pane.kind != "opened" or self.replies.slack is None:
            return Outcome.NOTED
        try:
            slack = self.named(message.workflow).triggers.slack
            if slack is not None and slack.suggested_prompts:
                self.replies.slack.suggest(pane.channel, pane.thread_ts, slack.suggested_prompts)
        except (ReplyError, AgentRuntimeError) as error:  # refused, or the workflow went since it was routed
            self.log.warning("no suggested prompts", extra={"reason": str(error)})
        return Outcome.NOTED

    def framed(self, event: TriggerEvent) -> TriggerEvent:
        """A direct message in an assistant thread the pane opened: said so (its channel titles it), with the
        channel the person has open beside it (the model is told)."""
        pane = self.threads.pane(event.thread_id) if event.attributes.get("direct_message") else None
        if pane is None:
            return event
        facts = {**event.attributes, "assistant_thread": True}
        if pane.viewing:
            facts["viewing"] = pane.viewing
        return replace(event, attributes=facts)
