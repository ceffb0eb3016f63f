"""Slack: an emoji added to a message (``reaction_added``, on the Slack route: ``slack_mention``).

It starts the workflows that list its channel and its emoji. Its run keeps a thread of its own (one per message
and emoji) and reads the message when it starts (the webhook answers Slack within 3 s): its text as the run's
message, its files, and its thread, where the answer goes as a mention's would and where "stop" reaches the run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..inbound import TriggerEvent
from ..triggers import slack
from ..triggers.queued import StopMessage
from .base import Chat, Routed
from .slack_mention import SlackMention, in_channel, names_channel

if TYPE_CHECKING:
    from ..workflows import Workflow


class SlackReaction(SlackMention):
    kinds = ("reaction_added",)
    route = None

    def matches(self, workflow: Workflow, event: Routed) -> bool:
        rule = workflow.triggers.slack
        return rule is not None and in_channel(workflow, event) and event.attributes.get("reaction") in rule.reactions

    def named(self, workflow: Workflow, event: Routed) -> bool:
        return names_channel(workflow, event)

    def stop(self, event: TriggerEvent) -> StopMessage | None:
        return None  # an emoji says nothing

    def prepare(self, event: TriggerEvent, chat: Chat) -> TriggerEvent:
        """The message it was added to: raises ``ReplyError`` when it cannot be read (Slack unreachable,
        ``reactions.get`` refused: the reactions:read scope), as a run on it would answer nothing."""
        if chat.slack is None or event.text:
            return event
        channel, ts, emoji = str(event.reply_to["channel"]), str(event.attributes["ts"]), event.attributes["reaction"]
        message = chat.reacted(channel, ts)
        thread_ts = str(message.get("thread_ts") or ts)
        text = f"[<@{event.user}> reacted with :{emoji}: to this message]\n{message.get('text') or '(no text)'}"
        reply_to = {"channel": channel, "thread_ts": thread_ts}
        return replace(event, text=text, reply_to=reply_to, attachments=slack.attachments(message))

    def answers_in(self, event: TriggerEvent) -> str | None:
        """The Slack thread of the message (``prepare``: its thread)."""
        channel, thread_ts = event.reply_to.get("channel"), event.reply_to.get("thread_ts")
        if not (channel and thread_ts):
            return None
        return slack.thread_id(str(event.attributes.get("team") or "T"), str(channel), str(thread_ts))
