"""What travels through the run queue, typed: one dataclass per kind, each with its JSON form.

Ten kinds: an event (the webhook: a Slack message, a JIRA comment, a /runs request), a person at the app's
pane in Slack (the webhook: opened, or looking at another channel), the continuation of a suspended run (the
continuation hook), a person's decision on a call that waits for approval, a person's rating of an answer and a
request to stop a run (the webhook's interactivity route; a stop also from the /runs API), the wake-up set
for when an approval request expires, a workflow's schedule firing (EventBridge Scheduler) and an event its
workflow's access rules refused at the webhook (the person is told why, privately), and a person's answer to a run's
request that they connect a provider (the webhook's OAuth callback).
The worker parses a body once and dispatches on the type with ``match``; a body that is none of them is an
``InvalidMessageError`` naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..inbound import PaneEvent, TriggerEvent
from .exceptions import InvalidMessageError

DECISIONS = ("approved", "denied")
VERDICTS = ("good", "bad")


@dataclass(frozen=True, slots=True)
class EventMessage:
    event: TriggerEvent
    trace: dict[str, str] | None = None  # the webhook's trace context (W3C traceparent)

    def body(self) -> dict[str, Any]:
        return {"type": "event", "event": self.event.to_dict()} | ({"trace": self.trace} if self.trace else {})


@dataclass(frozen=True, slots=True)
class ContinueMessage:
    run_id: str
    thread_id: str | None
    continuation: int

    def body(self) -> dict[str, Any]:
        return {
            "type": "continue",
            "run_id": self.run_id,
            "thread_id": self.thread_id,
            "continuation": self.continuation,
        }


@dataclass(frozen=True, slots=True)
class DecisionMessage:
    """A person's answer to an approval request."""

    run_id: str
    call_id: str
    decision: str  # approved | denied
    user: str

    def body(self) -> dict[str, Any]:
        return {
            "type": "decision",
            "run_id": self.run_id,
            "call_id": self.call_id,
            "decision": self.decision,
            "user": self.user,
        }


@dataclass(frozen=True, slots=True)
class ExpireMessage:
    """An approval request's time is up (or a wake-up came early: it is set again)."""

    run_id: str
    wakeup: str  # also in the body: the queue deduplicates Scheduler's messages by their content

    def body(self) -> dict[str, Any]:
        return {"type": "expire", "run_id": self.run_id, "wakeup": self.wakeup}


@dataclass(frozen=True, slots=True)
class FeedbackMessage:
    """A person's rating of an answer (Slack's feedback buttons)."""

    run_id: str
    verdict: str  # good | bad
    user: str
    name: str = ""  # the name the click gives (Slack's user name), kept with the rating: the run page shows it

    def body(self) -> dict[str, Any]:
        named = {"name": self.name} if self.name else {}
        return {"type": "feedback", "run_id": self.run_id, "verdict": self.verdict, "user": self.user, **named}


@dataclass(frozen=True, slots=True)
class StopMessage:
    """Someone asks a run to stop: a click on Stop (``via`` slack, checked by the worker: the one who asked or an
    approver), "stop" written in the thread (the pane has no message to carry a button), or an authenticated call to
    the /runs API (``via`` api). Sent in a message group of its own: the run it stops holds its thread's group
    while it works."""

    run_id: str  # "": the run working in ``said``'s thread (a "stop" written in the thread)
    user: str
    via: str  # slack | api
    said: TriggerEvent | None = None  # the message that said "stop": where to answer when nothing runs

    def body(self) -> dict[str, Any]:
        said = {"said": self.said.to_dict()} if self.said is not None else {}
        return {"type": "stop", "run_id": self.run_id, "user": self.user, "via": self.via, **said}


@dataclass(frozen=True, slots=True)
class TickMessage:
    """A workflow's schedule fired (EventBridge Scheduler on AWS, ``serve`` locally). ``at`` is the tick's own
    time (Scheduler's ``<aws.scheduler.scheduled-time>``): a tick delivered twice is one run."""

    workflow: str
    schedule: str
    at: str

    def body(self) -> dict[str, Any]:
        return {"type": "tick", "workflow": self.workflow, "schedule": self.schedule, "at": self.at}


@dataclass(frozen=True, slots=True)
class PaneMessage:
    """A person at the app's pane, for the workflow that takes its direct messages (its suggested prompts)."""

    event: PaneEvent
    workflow: str

    def body(self) -> dict[str, Any]:
        return {"type": "pane", "event": self.event.to_dict(), "workflow": self.workflow}


@dataclass(frozen=True, slots=True)
class RefusedMessage:
    """An event the webhook refused by its workflow's access rules (``access.start``): no run starts; the worker,
    which holds the chat's credentials, tells the person why, privately."""

    event: TriggerEvent
    reason: str

    def body(self) -> dict[str, Any]:
        return {"type": "refused", "event": self.event.to_dict(), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class ConnectedMessage:
    """The provider answered a run's request that its person connect (the stack's callback route): ``connected``
    (their tokens are sealed in the store) or ``denied``; the run waiting for it goes on."""

    run_id: str
    provider: str
    person: str
    outcome: str  # connected | denied
    attempt: str  # the state's nonce: one message per answer

    def body(self) -> dict[str, Any]:
        return {
            "type": "connected",
            "run_id": self.run_id,
            "provider": self.provider,
            "person": self.person,
            "outcome": self.outcome,
            "attempt": self.attempt,
        }


@dataclass(frozen=True, slots=True)
class DisconnectMessage:
    """A person wrote "disconnect <provider>" to the app: their connection to it is revoked and forgotten (no run;
    whatever workflow takes their messages, or none)."""

    event: TriggerEvent  # the message that said it: who, and where to answer
    provider: str

    def body(self) -> dict[str, Any]:
        return {"type": "disconnect", "event": self.event.to_dict(), "provider": self.provider}


QueueMessage = (
    EventMessage
    | PaneMessage
    | ContinueMessage
    | DecisionMessage
    | ExpireMessage
    | FeedbackMessage
    | StopMessage
    | TickMessage
    | RefusedMessage
    | ConnectedMessage
    | DisconnectMessage
)
STOP_VIA = ("slack", "api")
# The kinds read field by field, with nothing to check beyond their shape.
_PLAIN: dict[str, Callable[[dict[str, Any]], QueueMessage]] = {
    "expire": lambda body: ExpireMessage(str(body["run_id"]), str(body.get("wakeup", ""))),
    "tick": lambda body: TickMessage(str(body["workflow"]), str(body["schedule"]), str(body["at"])),
    "refused": lambda body: RefusedMessage(TriggerEvent.from_dict(body["event"]), str(body["reason"])),
    "disconnect": lambda body: DisconnectMessage(TriggerEvent.from_dict(body["event"]), str(body["provider"])),
    "connected": lambda body: ConnectedMessage(
        str(body["run_id"]), str(body["provider"]), str(body["person"]), str(body["outcome"]), str(body["attempt"])
    ),
}


def parse(body: Any) -> QueueMessage:
    """A queue body as its message; ``InvalidMessageError`` for anything else."""
    if not isinstance(body, dict):
        raise InvalidMessageError("a queue message must be a JSON object")
    try:
        plain = _PLAIN.get(str(body.get("type")))
        if plain is not None:
            return plain(body)
        match body.get("type"):
            case "event":
                return EventMessage(TriggerEvent.from_dict(body["event"]), body.get("trace") or None)
            case "pane":
                workflow = str(body["workflow"])
                return PaneMessage(PaneEvent(**body["event"]), workflow)
            case "continue":
                return ContinueMessage(str(body["run_id"]), body.get("thread_id"), int(body.get("continuation", 0)))
            case "decision":
                decision = DecisionMessage(
                    str(body["run_id"]), str(body["call_id"]), str(body["decision"]), str(body["user"])
                )
                return _one_of(decision, decision.decision, DECISIONS, "decision")
            case "feedback":
                names = (str(body["run_id"]), str(body["verdict"]), str(body["user"]), str(body.get("name") or ""))
                feedback = FeedbackMessage(*names)
                return _one_of(feedback, feedback.verdict, VERDICTS, "verdict")
            case "stop":
                said = TriggerEvent.from_dict(body["said"]) if body.get("said") else None
                stop = StopMessage(str(body["run_id"]), str(body["user"]), str(body["via"]), said)
                return _one_of(stop, stop.via, STOP_VIA, "stop origin")
            case kind:
                raise InvalidMessageError(f"unknown message type {kind!r}")
    except KeyError as error:
        raise InvalidMessageError(f"a {body.get('type')} message without {error}") from None
    except (TypeError, ValueError) as error:  # fields of the wrong shape (an event from another version)
        raise InvalidMessageError(f"a malformed {body.get('type')} message ({error})") from None


def _one_of(message: QueueMessage, value: str, allowed: tuple[str, ...], what: str) -> QueueMessage:
    if value not in allowed:
        raise InvalidMessageError(f"unknown {what} {value!r}")
    return message
