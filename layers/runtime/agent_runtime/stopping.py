"""Stopping a run: a person in the thread (the one who asked, or an approver) presses Stop, or someone runs
``agent-runtime runs stop`` or calls the stack's ``/runs/{id}/stop``. The request is an item in the run's
partition (``RunStore.request_stop``, the first request wins); the run ends at its next step — before its next
model call, or the call in flight is closed — with its state kept and the record saying who stopped it.

The running loop asks a ``StopCheck``, which reads the store at most once per ``interval`` seconds (one read,
not one per streamed chunk) and never fails the run it watches: a store that cannot be read is no request."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from . import messages as msgs
from .messages import Message

logger = logging.getLogger(__name__)

CHECK_SECONDS = 2.0  # how stale a stop may be seen: one store read per run per this many seconds
NOT_RUN = "Not run: the run was stopped by {who} before this call."


@dataclass(frozen=True, slots=True)
class StopRequest:
    NAME: ClassVar[str] = "stop"  # its item in the run's partition (stores.items)
    by: str  # who: a Slack user id, "local:<login>" (older records: "cli:<login>"), "api:<caller>"
    at: float  # epoch seconds
    via: str  # slack | cli | api | ctrl-c (the terminal the CLI run works in)

    def who(self) -> str:
        if self.via == "ctrl-c":
            return f"Ctrl-C ({self.by})"
        return f"<@{self.by}>" if self.via == "slack" else self.by

    def reason(self) -> str:
        return f"Stopped by {self.who()}."

    def to_dict(self) -> dict[str, Any]:
        return {"by": self.by, "at": self.at, "via": self.via}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StopRequest:
        return cls(str(data.get("by", "someone")), float(data.get("at", 0.0)), str(data.get("via", "")))

    to_data, from_data = to_dict, from_dict  # as a stored item


class StopCheck:
    """``lookup`` reads the run's stop request (None: none); called at most once per ``interval`` seconds, and
    never again once a request is seen."""

    def __init__(
        self,
        lookup: Callable[[], StopRequest | None],
        *,
        interval: float = CHECK_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.lookup, self.interval, self.clock = lookup, interval, clock
        self.found: StopRequest | None = None
        self._next = float("-inf")

    def __call__(self) -> StopRequest | None:
        if self.found is not None or self.clock() < self._next:
            return self.found
        return self.fresh()

    def fresh(self) -> StopRequest | None:
        """The request read now, whatever the interval (a step's boundary: see ``asked_now``)."""
        if self.found is not None:
            return self.found
        self._next = self.clock() + self.interval
        try:
            request = self.lookup()
        except Exception as error:  # a store hiccup is no request: the run goes on, the next check reads again
            logger.warning("error=<%s> | could not read the run's stop request", type(error).__name__)
            return None
        self.found = self.found or request
        return self.found

    def ask(self, request: StopRequest) -> None:
        """A stop asked in this process (Ctrl-C): seen at once, by the next check (a stream's watcher too)."""
        if self.found is None:
            self.found = request


def asked_now(check: Callable[[], StopRequest | None]) -> StopRequest | None:
    """At a step's boundary (before a model call, a script's next call): a ``StopCheck`` reads the store now. Its
    interval is for the many asks of a streamed call; steps may follow each other within it, and a stop asked just
    before one must not let another model or tool call through."""
    return check.fresh() if isinstance(check, StopCheck) else check()


def never() -> StopRequest | None:
    """The check of a run nobody can stop (no store)."""
    return None


def answer_pending(messages: list[Message], request: StopRequest) -> None:
    """The calls the model asked for and the stop left unrun get a result saying so: no orphaned call, and the
    thread's next turn never runs them (they were asked for before the stop)."""
    for call in msgs.pending_tool_calls(messages):
        messages.append(msgs.tool_result(call["id"], NOT_RUN.format(who=request.who())))
