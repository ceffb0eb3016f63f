"""The protocol of a trigger source: what the webhook and the worker ask of the one that started a run.

A source is one class (``Source``) whose every method has the default of a source that does nothing of its kind:
no route of its own, matches no workflow (started by name), no stop rule, its message as it came, answered
nowhere, described by its name, never private, no decision said in a message. A new source overrides what it
does and is registered once (``sources/__init__.py``).

Sources sit on the triggers' floor: the webhook takes them, and the chat below which they sit is handed to them
by the worker as a ``Chat`` (``chat/surface.py``'s ``Surfaces``), so chat's types appear here only in
annotations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol

from aws_lambda_powertools import Logger

from .. import inert
from ..access import Requester
from ..inbound import Challenge, Ignored, TriggerEvent
from ..redaction import scrub
from ..stores.base import Store
from ..triggers.config import TriggerConfig
from ..triggers.exceptions import RejectedRequest
from ..triggers.payload import raw_body
from ..triggers.queued import StopMessage
from ..triggers.signed import Delivery

if TYPE_CHECKING:
    from ..chat.channels import Channel
    from ..chat.replies import JiraReplier, SlackReplier
    from ..workflows import Workflow


class Routed(Protocol):
    """What routing reads of an incoming event: a ``TriggerEvent``, or Slack's pane opened (``PaneEvent``)."""

    @property
    def source(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, Any]: ...


class Chat(Protocol):
    """What a source may use of chat to read and answer: the clients the deployment has credentials for and the
    surfaces it can answer on (``None``: that surface has no credentials here)."""

    @property
    def slack(self) -> SlackReplier | None: ...

    @property
    def jira(self) -> JiraReplier | None: ...

    def thread(
        self, target: Mapping[str, str], thread_id: str, run_id: str, *, team: str | None, user: str | None
    ) -> Channel | None: ...

    def pane(
        self,
        target: Mapping[str, str],
        thread_id: str,
        run_id: str,
        *,
        team: str | None,
        user: str | None,
        assistant_thread: bool,
    ) -> Channel | None: ...

    def issue(self, issue_key: str) -> Channel | None: ...

    def nowhere(self, name: str) -> Channel: ...

    def reacted(self, channel: str, ts: str) -> Mapping[str, Any]: ...

    def is_private(self, channel: str) -> bool: ...


@dataclass(frozen=True)
class Request:
    """One POST to a source's route, as its parser reads it (nothing is verified yet)."""

    raw: Mapping[str, Any]  # API Gateway's event: headers, the body, requestContext (the IAM caller)
    params: Mapping[str, str]  # the route's path parameters (/hooks/<name>: name)
    config: TriggerConfig
    workflows: Sequence[Workflow]
    now: float
    log: Logger
    store: Callable[[], Store] | None = None  # where a handshake's token is kept (made on first use)

    @property
    def headers(self) -> Mapping[str, str]:
        return self.raw.get("headers") or {}

    @cached_property
    def body(self) -> bytes:
        """The bytes the sender signed; a 400 when API Gateway's base64 or the text is not valid (read when asked:
        a route checks its caller first)."""
        return raw_body(self.raw)


@dataclass(frozen=True)
class Queued:
    """A queue message a route sends as it is (no run: the pane opened), what it logs and what it answers."""

    body: dict[str, Any]
    group: str
    dedup: str
    said: str
    extra: Mapping[str, Any] = field(default_factory=dict)
    answer: Mapping[str, Any] = field(default_factory=dict)


Intake = TriggerEvent | Delivery | Queued | Ignored | Challenge


class Source:
    """One trigger source (the events whose ``source`` is ``name`` and whose kind is one of ``kinds``, or any
    kind no other source of that name takes)."""

    name = ""  # the events' ``source``
    kinds: tuple[str, ...] = ()  # empty: every kind of ``name`` no other source lists
    route: str | None = None  # the POST route its requests come to (/hooks/<name>: a path parameter)
    starts_apart = False  # its runs start outside their thread's message group (a schedule's tick: the schedule's)
    answers_caller = False  # its caller reads the route's answer (an API call, a webhook): a refusal is said there

    def parse(self, request: Request) -> Intake:
        """A request to ``route``, verified: the event, or why it starts nothing; ``RejectedRequest`` to refuse."""
        raise RejectedRequest(404, "no route here")

    def matches(self, workflow: Workflow, event: Routed) -> bool:
        """Whether ``workflow`` takes ``event`` (its ``triggers:`` section); a source whose events name their
        workflow (the API, a schedule, a signed webhook's route) matches none."""
        return False

    def named(self, workflow: Workflow, event: Routed) -> bool:
        """Whether ``workflow`` names the event's place itself (a channel, a project) rather than taking any
        (``*``): routing prefers such a workflow to one that takes everything."""
        return False

    def stop(self, event: TriggerEvent) -> StopMessage | None:
        """A message that asks to stop the run working in its thread, as the stop to queue; None: a message."""
        return None

    def prepare(self, event: TriggerEvent, chat: Chat) -> TriggerEvent:
        """The event as the run starts from it (read now what the webhook had no time to read)."""
        return event

    def channel(self, event: TriggerEvent, chat: Chat, run_id: str) -> Channel:
        """Where the run shows its work and answers."""
        return chat.nowhere(event.source)

    def answers_in(self, event: TriggerEvent) -> str | None:
        """The thread the run answers in when it is not its own (where "stop" written reaches it)."""
        return None

    def described(self, event: TriggerEvent) -> str:
        """The trigger in the runs channel's line (Slack mrkdwn: every field of the event through ``safe``)."""
        return safe(event.source)

    def private(self, event: TriggerEvent, chat: Chat) -> bool:
        """Whether the run comes from a conversation only some people see (its words stay there)."""
        return False

    def decision(self, event: TriggerEvent) -> tuple[str, str | None] | None:
        """A message that decides the approval its thread's run waits for: the decision and the request's code."""
        return None

    def requester(self, event: TriggerEvent) -> Requester:
        """Who the run is for — what the workflow's access rules and budgets are checked against: the event's
        user in this source's namespace, and the ids access groups may list them by (none: no group takes them)."""
        return Requester(f"{event.source}:{event.user}", event.user)

    def acts_for(self, event: TriggerEvent, workflow: Workflow) -> tuple[str | None, str]:
        """Who the run acts for — whose connections its tools acting as the requester use: a person's id across
        sources (``slack:U0123``), or None and why it acts for nobody (the tools refuse with that reason)."""
        return self.requester(event).person, ""


def first_match(source: Source, event: Routed, workflows: Iterable[Workflow]) -> Workflow | None:
    """The workflow that takes ``event``: one that names its place (a channel, a project) before one that takes
    any (``*``), then the first by name."""
    taking = [w for w in workflows if source.matches(w, event)]
    return min(taking, key=lambda w: (not source.named(w, event), w.name), default=None)


def safe(text: str) -> str:
    """A name in Slack's mrkdwn: redacted, cut, inert, no markup of its own (a name cannot ping a channel)."""
    return inert.mrkdwn(scrub(text)[:80])
