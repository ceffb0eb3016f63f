"""The worker's table: one handler per kind of queue message, each in a module of its own (``on_*.py``).

A handler registers itself with ``@handles(Kind)``; the worker parses a body, finds the handler for its type and
calls it with the delivery. A new kind of message is a dataclass in ``triggers/queued.py`` and a module here, never
a line in the worker.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .. import telemetry
from ..chat.channels import Channel
from ..chat.surface import Surfaces
from ..deadline import Deadline
from ..inbound import TriggerEvent
from ..triggers.exceptions import InvalidMessageError
from ..triggers.queued import EventMessage, QueueMessage
from .answer import Answers
from .approvals import ApprovalDesk
from .metrics import RunMetrics
from .outcome import Outcome
from .pane import Pane
from .process import Process
from .reports import Reports
from .stops import Stops
from .unit import Unit, UnitRuns, UnitThreads

M = TypeVar("M", bound=QueueMessage)


@dataclass(frozen=True)
class Delivery(Generic[M]):
    """One queue message as the worker took it: the message, its body as it came (a deferred message is sent
    again as it was), the invocation's deadline, the process's services and the message's unit of work — what
    the features it calls are made with."""

    process: Process
    message: M
    body: dict[str, Any]
    deadline: Deadline
    unit: Unit

    @property
    def runs(self) -> UnitRuns:
        return self.unit.runs

    @property
    def threads(self) -> UnitThreads:
        return self.unit.threads

    @property
    def chat(self) -> Surfaces:
        """What a source may use of chat: the clients as they are now (secrets load after the process is made)."""
        return Surfaces(self.process.replies, self.runs)

    def channel(self, event: TriggerEvent, run_id: str) -> Channel:
        return self.process.sources.of(event).channel(event, self.chat, run_id)

    @property
    def desk(self) -> ApprovalDesk:
        p = self.process
        decides = lambda event, user: p.may_approve(event, user).allowed  # noqa: E731
        return ApprovalDesk(
            self.runs, self.threads, self.channel, p.approvers, p.now, sources=p.sources, decides=decides
        )

    @property
    def answers(self) -> Answers:
        process = self.process
        return Answers(process.config, self.runs, process.log, process.max_attachment_bytes, clock=process.now)

    @property
    def pane(self) -> Pane:
        return Pane(self.threads, self.process.replies, self.process.workflow, self.process.log)

    @property
    def reports(self) -> Reports:
        """Pages, the runs channel, each run's metrics (EMF lines, beside the handler's counts)."""
        p = self.process
        emf = RunMetrics() if p.metrics is not None else None
        return Reports(p.config, self.runs, p.secrets, lambda: p.replies, p.log, p.now, emf, p.sources)

    @property
    def stops(self) -> Stops:
        p = self.process
        return Stops(
            self.runs,
            self.threads,
            approvers=p.approvers,
            channel=self.channel,
            queue=p.queue,
            log=p.log,
            clock=p.now,
            sources=p.sources,
        )

    @property
    def trace_parent(self) -> Any:
        """The webhook's trace context (events carry it), so the run's spans continue the request's trace."""
        return telemetry.extract(self.message.trace if isinstance(self.message, EventMessage) else None)

    def about(self, event: TriggerEvent, run_id: str) -> None:
        """Every log line of this message names its run, workflow and source."""
        log = self.process.log
        log.set_correlation_id(event.correlation_id)
        log.append_keys(run_id=run_id, workflow=event.workflow, source=event.source)

    def run_event(self, run_id: str, *, click: bool = False) -> TriggerEvent | None:
        """The event that started ``run_id``. A click (a decision, a rating, a stop) on a run this stack never saw
        — a forged id, or items expired — is dropped (None); any other message for it is invalid."""
        saved = self.runs.load_event(run_id)
        if saved is None and click:
            self.process.log.warning("a click on a run this stack never saw: dropped")
            return None
        if saved is None:
            raise InvalidMessageError(f"a message for unknown run {run_id}")
        self.about(saved, run_id)
        return saved


Handler = Callable[[Delivery[Any]], Outcome]
HANDLERS: dict[type[Any], Handler] = {}


def handles(kind: type[M]) -> Callable[[Callable[[Delivery[M]], Outcome]], Callable[[Delivery[M]], Outcome]]:
    def register(handler: Callable[[Delivery[M]], Outcome]) -> Callable[[Delivery[M]], Outcome]:
        if kind in HANDLERS:
            raise RuntimeError(f"two handlers for {kind.__name__}")
        HANDLERS[kind] = handler
        return handler

    return register


def dispatch(delivery: Delivery[Any]) -> Outcome:
    return HANDLERS[type(delivery.message)](delivery)
