"""Long runs on Lambda: a run suspended at the deadline re-enqueues itself and continues in a new invocation.

The checkpoint is already durable (the persistence hook writes one after every step); this hook sends the
message that tells a worker to resume it. A counter in the run's state caps the number of continuations, so
a run that never finishes cannot bounce through the queue forever (Lambda's recursion guard is a backstop).
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import TYPE_CHECKING, Any

from ..events import ContinuationEnqueued, ContinuationRefused
from ..hooks import Hook
from ..record import RunStatus
from ..state import Slot
from ..triggers.queued import ContinueMessage

if TYPE_CHECKING:
    from ..steps import Run

COUNT: Slot[int] = Slot("continuations", int, owner=__name__)  # how often this run was continued


class ContinuationHook(Hook):
    """``queue`` is an :class:`~agent_runtime.triggers.queue.EventQueue` (SQS, FIFO per thread, or in-process)."""

    def __init__(self, queue: Any, *, max_continuations: int = 10, thread_id: str | None = None) -> None:
        self.queue, self.max, self.thread_id = queue, max_continuations, thread_id

    def on_run_end(self, run: Run) -> None:
        if run.record.status is not RunStatus.SUSPENDED:
            return
        done = COUNT.get(run.state.context)
        if done >= self.max:
            run.record.status = RunStatus.FAILED
            run.record.stop_reason = f"the run was continued {done} times without finishing (max {self.max})"
            run.record.event(ContinuationRefused(continuations=done))
            return
        body = ContinueMessage(run.state.run_id, self.thread_id, done + 1).body()
        group = self.thread_id or run.state.run_id
        self.queue.send(body, group=group, dedup=f"{run.state.run_id}:continue:{done + 1}")
        run.record.event(ContinuationEnqueued(continuation=done + 1))


def count_continuation(state: MutableMapping[str, Any]) -> None:
    """Call when resuming from a continuation message (the worker does this before running)."""
    COUNT.set(state, COUNT.get(state) + 1)
