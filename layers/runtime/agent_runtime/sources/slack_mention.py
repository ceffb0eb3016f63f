"""Slack: a mention in a channel, a direct message with the app (its pane), and the pane opened.

``POST /slack/events`` carries every Slack event (reactions too: their source is ``slack_reaction``). A mention
starts the workflows that list its channel, a direct message the ones that take direct messages; "stop" written in
a thread stops the run working there; the answer goes to the thread (a direct message: the app's pane, with a
status for the "working" message). A conversation only some people see (private, direct, group) is private.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..access import Requester
from ..inbound import Ignored, PaneEvent, TriggerEvent
from ..triggers import slack
from ..triggers.exceptions import RejectedRequest
from ..triggers.queued import DisconnectMessage, PaneMessage, StopMessage
from .base import Chat, Intake, Queued, Request, Routed, Source, first_match, safe

if TYPE_CHECKING:
    from ..chat.channels import Channel
    from ..workflows import Workflow


class SlackMention(Source):
    name = "slack"
    route: str | None = "/slack/events"

    def parse(self, request: Request) -> Intake:
        body = request.body
        secret = request.config.secret("slack_signing_secret")
        if not secret:
            raise RejectedRequest(401, "Slack is not configured (no signing secret)")
        slack.verify(request.headers, body, secret, now=request.now)
        parsed = slack.parse(body, bot_user_id=request.config.slack_bot_user_id)
        if isinstance(parsed, PaneEvent):
            return _pane(self, parsed, request)
        return (disconnecting(parsed) or parsed) if isinstance(parsed, TriggerEvent) else parsed

    def matches(self, workflow: Workflow, event: Routed) -> bool:
        rule = workflow.triggers.slack
        if rule is None:
            return False
        if event.attributes.get("direct_message"):
            return rule.direct_messages
        return in_channel(workflow, event)

    def named(self, workflow: Workflow, event: Routed) -> bool:
        return names_channel(workflow, event)

    def stop(self, event: TriggerEvent) -> StopMessage | None:
        return StopMessage("", event.user, "slack", said=event) if slack.says_stop(event) else None

    def channel(self, event: TriggerEvent, chat: Chat, run_id: str) -> Channel:
        facts, target = event.attributes, dict(event.reply_to)
        team, user = str(facts.get("team") or "") or None, event.user or None
        if facts.get("direct_message"):
            found = chat.pane(
                target,
                event.thread_id,
                run_id,
                team=team,
                user=user,
                assistant_thread=bool(facts.get("assistant_thread")),
            )
        else:
            found = chat.thread(target, event.thread_id, run_id, team=team, user=user)
        return found if found is not None else chat.nowhere(event.source)

    def described(self, event: TriggerEvent) -> str:
        channel = event.reply_to.get("channel") or event.attributes.get("channel")
        return f"slack {event.kind} in <#{safe(str(channel))}>"

    def requester(self, event: TriggerEvent) -> Requester:
        """The person who wrote (or reacted), in the channel they wrote in."""
        channel = str(event.reply_to.get("channel") or event.attributes.get("channel") or "")
        ids = (("slack_users", event.user), ("slack_channels", channel), ("slack_usergroups", event.user))
        return Requester(f"slack:{event.user}", event.user, ids)

    def private(self, event: TriggerEvent, chat: Chat) -> bool:
        facts = event.attributes
        if facts.get("direct_message") or facts.get("channel_type") in ("im", "mpim", "group"):
            return True
        channel = str(event.reply_to.get("channel") or facts.get("channel") or "")
        return chat.is_private(channel) if channel else True


DISCONNECT = re.compile(r"\s*disconnect\s+([a-z][a-z0-9_]{0,23})[\s.!]*", re.IGNORECASE)


def disconnecting(event: TriggerEvent) -> Queued | None:
    """ "disconnect github" written to the app (a direct message, or a mention anywhere it is): that person's
    connection goes — queued for the worker whichever workflow takes the message, or none (the request to connect
    came in a direct message, and says to answer there)."""
    said = DISCONNECT.fullmatch(event.text or "")
    if said is None:
        return None
    provider = said.group(1).lower()
    body = DisconnectMessage(event, provider).body()
    answer = {"status": "queued", "disconnect": provider}
    return Queued(
        body, f"disconnect:{event.user}", event.dedup_key, "disconnect queued", {"provider": provider}, answer
    )


def in_channel(workflow: Workflow, event: Routed) -> bool:
    """The event comes from one of the channels the workflow's ``triggers.slack`` lists (or any: ``*``)."""
    rule = workflow.triggers.slack
    return rule is not None and ("*" in rule.channels or event.attributes.get("channel") in rule.channels)


def names_channel(workflow: Workflow, event: Routed) -> bool:
    """The workflow lists the event's channel itself (not only ``*``); a direct message names none."""
    rule, facts = workflow.triggers.slack, event.attributes
    return rule is not None and not facts.get("direct_message") and facts.get("channel") in rule.channels


def _pane(source: Source, event: PaneEvent, request: Request) -> Queued | Ignored:
    """For the worker (the Web API calls are its job), when there is something to do: the workflow's suggested
    prompts to offer, or an assistant thread to mark (and the channel the person looks at beside it)."""
    workflow = first_match(source, event, request.workflows)
    prompts = workflow.triggers.slack.suggested_prompts if workflow and workflow.triggers.slack else ()
    if workflow is None or (event.kind == "opened" and event.thread_ts is None and not prompts):
        return Ignored("no workflow takes direct messages" if workflow is None else "no suggested prompts")
    body, said = PaneMessage(event, workflow.name).body(), {"kind": event.kind, "workflow": workflow.name}
    answer = {"status": "queued", "workflow": workflow.name}
    return Queued(body, event.thread_id, event.dedup_key, "pane event queued", said, answer)
