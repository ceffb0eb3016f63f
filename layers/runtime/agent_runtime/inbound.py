"""What a trigger hands to the worker: one normalised event, whatever the source (Slack, JIRA, the API)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from .ids import event_run_id


@dataclass(frozen=True, slots=True)
class Attachment:
    """A file to download into the run (Slack ``url_private`` with the bot token; JIRA attachment content)."""

    name: str
    url: str
    size: int | None = None
    mimetype: str | None = None


@dataclass(frozen=True, slots=True)
class TriggerEvent:
    NAME: ClassVar[str] = "event"  # its item in the run's partition (stores.items)
    source: str  # slack | jira | api
    kind: str  # app_mention | message | comment_created | issue_created | api
    dedup_key: str  # one per user action, the same across retries and duplicate deliveries
    text: str
    user: str
    thread_id: str  # the conversation it continues: a Slack thread, a JIRA issue
    correlation_id: str  # for logs: the Slack event id, the JIRA issue key
    reply_to: Mapping[str, str] = field(default_factory=dict)  # slack: channel, thread_ts; jira: issue_key
    attributes: Mapping[str, Any] = field(default_factory=dict)  # routing facts: channel, project, labels, ...
    attachments: tuple[Attachment, ...] = ()
    workflow: str | None = None  # chosen by routing (or named by a /runs request)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["reply_to"], data["attributes"] = dict(self.reply_to), dict(self.attributes)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TriggerEvent:
        fields = dict(data)
        fields["attachments"] = tuple(Attachment(**a) for a in fields.get("attachments", ()))
        return cls(**fields)

    def to_data(self) -> dict[str, Any]:  # as a stored item
        return self.to_dict()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> TriggerEvent:
        return cls.from_dict(data)


@dataclass(frozen=True, slots=True)
class PaneEvent:
    """A person at the app's own pane in Slack (a direct message with the app: its agent or assistant view).

    ``opened``: they opened it (the workflow's suggested prompts are due); ``context``: beside an assistant
    thread, they opened another channel (kept with the thread, told to the model with the next message).
    """

    kind: str  # opened | context
    dedup_key: str
    team: str
    channel: str  # the direct-message channel with the app
    user: str
    thread_ts: str | None = None  # the assistant thread (assistant view); None: the conversation (agent view)
    viewing: str | None = None  # the channel the person has open beside the pane
    source: str = "slack"

    @property
    def thread_id(self) -> str:
        """The thread the pane's messages continue: one id with the messages' ``TriggerEvent.thread_id``."""
        return f"slack-{self.team}-{self.channel}" + (f"-{self.thread_ts}" if self.thread_ts else "")

    @property
    def attributes(self) -> Mapping[str, Any]:
        """What routing reads: a pane is a direct message with the app."""
        return {"channel": self.channel, "direct_message": True, "team": self.team}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Ignored:
    """A well-formed request that starts nothing (the bot's own message, an edit, an event type we skip)."""

    reason: str


@dataclass(frozen=True, slots=True)
class Challenge:
    """Slack's ``url_verification``: answer with the challenge."""

    challenge: str


def run_id_for(event: TriggerEvent) -> str:
    """A run's id comes from the event's dedup key: a redelivery finds its run (to resume, or answered)."""
    return event_run_id(event.dedup_key)
