"""The playground's workspace, drawn from the workflows: a channel for each channel their Slack triggers list (and
#general for "any"), the app's direct message (its pane), two people to act as, the JIRA projects, the signed
webhooks and the schedules they take. Ids look like Slack's (the webhook's parsers check their shape)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..workflows import Workflow
from ..workflows.triggers import SlackTrigger

TEAM = "T0PLAYGROUND"
BOT_USER, BOT_ID, APP_ID = "U0AGENT", "B0AGENT", "A0AGENT"
BOT_NAME = "agent"
DM = "D0AGENT"  # the app's direct message with the person: its pane
GENERAL = "C0GENERAL"
RUNS = "C0RUNS"  # the runs channel (a line per finished run), unless AGENT_RUNS_CHANNEL names another
PEOPLE = {"U0DANA": "Dana", "U0SAM": "Sam"}  # who the page acts as: a second person shows who may decide
JIRA_BOT_ACCOUNT = "pg-agent"
_USER = re.compile(r"[UW][A-Z0-9]{2,40}")  # a Slack user id (approvers may be JIRA account ids too)
REACTIONS = ("eyes", "white_check_mark", "jira", "bug", "thumbsup", "memo")  # offered beside the workflows' own


@dataclass(frozen=True, slots=True)
class Room:
    id: str
    name: str
    listening: tuple[str, ...] = ()  # what starts a run here: "document-feedback (mentions)", ...
    mention: str | None = None  # the workflow a mention here starts, as serve routes it (None: nothing)


@dataclass(frozen=True, slots=True)
class Layout:
    channels: tuple[Room, ...]
    dm_workflow: str | None  # the workflow that takes direct messages (its pane)
    reactions: tuple[str, ...]
    jira: tuple[dict[str, Any], ...] = field(default=())  # the workflows' JIRA triggers, as the form offers them
    hooks: tuple[dict[str, Any], ...] = field(default=())
    schedules: tuple[dict[str, Any], ...] = field(default=())
    runs_channel: str | None = None
    people: Mapping[str, str] = field(default_factory=lambda: dict(PEOPLE))  # Slack user id → name
    # The Slack user groups the workflows' access rules name → their members: the first person in each, the second
    # in none, so the page shows one person let in and one refused (usergroups.users.list reads them).
    usergroups: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def room(self, channel: str) -> Room | None:
        return next((room for room in self.channels if room.id == channel), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "team": TEAM,
            "bot": {"user": BOT_USER, "name": BOT_NAME},
            "people": [{"id": user, "name": name} for user, name in self.people.items()],
            "channels": [
                {"id": r.id, "name": r.name, "listening": list(r.listening), "mention": r.mention}
                for r in self.channels
            ],
            "dm": {"id": DM, "workflow": self.dm_workflow},
            "reactions": list(self.reactions),
            "jira": list(self.jira),
            "hooks": list(self.hooks),
            "schedules": list(self.schedules),
            "usergroups": {group: list(members) for group, members in self.usergroups.items()},
        }


def jira_account(name: str) -> str:
    """A person's JIRA account id in the playground (its JIRA has no other directory)."""
    return f"pg-{name.lower()}"


def person_name(user: str) -> str:
    """``U0123LEAD`` → ``Lead``: a workflow's approver, named as a person would be."""
    bare = re.sub(r"^[UW]0?\d*", "", user)
    return bare.title() if bare else user


def channel_name(channel: str) -> str:
    """``C0HELPDESK`` → ``helpdesk``, ``C0123INCIDENTS`` → ``incidents``: what a person would have named it."""
    bare = re.sub(r"^[CG]0?\d*", "", channel)
    return (bare or channel).lower().replace("_", "-")


def layout_of(workflows: Sequence[Workflow], runs_channel: str | None = None) -> Layout:
    listening: dict[str, list[str]] = {GENERAL: []}
    for workflow in workflows:
        slack = workflow.triggers.slack or SlackTrigger()
        for channel in slack.channels:
            said = f"{workflow.name} (mentions" + "".join(f", :{r}:" for r in slack.reactions) + ")"
            listening.setdefault(GENERAL if channel == "*" else channel, []).append(said)
        for schedule in workflow.triggers.schedules:
            kind, _, where = schedule.answer_to.partition(":")
            if kind == "slack" and where:
                listening.setdefault(where, []).append(f"{workflow.name} (schedule {schedule.name})")
    if runs_channel:
        listening.setdefault(runs_channel, []).append("a line per finished run (the runs channel)")
    rooms = tuple(
        Room(cid, channel_name(cid), tuple(said), mentioned(cid, workflows)) for cid, said in listening.items()
    )
    dms = next((w.name for w in workflows if w.triggers.slack and w.triggers.slack.direct_messages), None)
    approvers = [a for w in workflows for a in w.tools.approvers if _USER.fullmatch(a)]  # who may decide: here too
    emoji = dict.fromkeys([r for w in workflows if w.triggers.slack for r in w.triggers.slack.reactions])
    return Layout(
        channels=rooms,
        dm_workflow=dms,
        reactions=tuple({**emoji, **dict.fromkeys(REACTIONS)}),
        jira=tuple(_jira(w) for w in workflows if w.triggers.jira is not None),
        hooks=tuple(_hook(w) for w in workflows if w.triggers.webhook is not None),
        schedules=tuple(
            {"workflow": w.name, "schedule": s.name, "expression": s.expression, "answer_to": s.answer_to}
            for w in workflows
            for s in w.triggers.schedules
        ),
        runs_channel=runs_channel,
        people={**PEOPLE, **{user: person_name(user) for user in approvers if user not in PEOPLE}},
        usergroups=_usergroups(workflows),
    )


@dataclass(frozen=True, slots=True)
class _Mention:
    """What routing reads of a mention in a channel (a ``Routed``)."""

    attributes: Mapping[str, Any]
    source: str = "slack"
    kind: str = "app_mention"


def mentioned(channel: str, workflows: Sequence[Workflow]) -> str | None:
    """The workflow a mention in ``channel`` starts, chosen as serve's webhook chooses it (a channel's own workflow
    before one that takes any channel): a schedule's answer channel may still take mentions, for another one."""
    from ..sources.base import first_match
    from ..sources.slack_mention import SlackMention

    found = first_match(SlackMention(), _Mention({"channel": channel}), workflows)
    return found.name if found is not None else None


def _usergroups(workflows: Sequence[Workflow]) -> dict[str, tuple[str, ...]]:
    named = [u for w in workflows for g in w.access.groups.values() for u in g.slack_usergroups if u != "*"]
    return dict.fromkeys(named, (next(iter(PEOPLE)),))


def _jira(workflow: Workflow) -> dict[str, Any]:
    rule = workflow.triggers.jira
    assert rule is not None
    return {
        "workflow": workflow.name,
        "projects": list(rule.projects),
        "issue_types": list(rule.issue_types),
        "labels": list(rule.labels),
        "events": list(rule.events),
    }


def _hook(workflow: Workflow) -> dict[str, Any]:
    rule = workflow.triggers.webhook
    assert rule is not None
    return {"workflow": workflow.name, "signature": rule.signature, "events": list(rule.events), "secret": rule.secret}
