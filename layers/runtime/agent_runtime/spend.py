"""The spend limit: ``limits.max_cost`` per run and ``limits.max_cost_per_thread_day`` per thread and UTC day,
in dollars from the exact ledger and the price table, checked before each model request.

When the limit leaves room for fewer than two more requests (each estimated at the last call's prompt and the
longest reply so far, or the reply cap before the first), the model answers once without tools, as at the
tool-call cap, if that answer fits; so a run ends at its limit give or take one request. Its state is kept: the
next turn of the thread, with the limit raised, goes on where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .messages import Message
from .models.prices import Prices
from .record import RunRecord
from .state import Slot

# An approver's grant ("continue with $N more") is the run's own limit, kept in the run's state so the run keeps it
# when it suspends and resumes in another invocation; a new turn of the thread starts without it.
GRANTED: Slot[float] = Slot("spend_granted", float, owner=__name__)

MIN_REPLY_ESTIMATE = 256  # tokens: a reply so far short says little about the next one
COST_NOTE = (
    "The workflow's spend limit ({limit}) is reached: no more tools can run. Answer now with what you have, and "
    "say briefly what is left undone."
)


@dataclass(frozen=True, slots=True)
class SpendLimit:
    per_run: float | None = None
    per_thread_day: float | None = None
    thread_spent: Callable[[str], float] = lambda run_id: 0.0  # the thread's other runs today (once per run)
    granted: float = 0.0  # an approver's "continue with $N more" in the message that started this run

    def __bool__(self) -> bool:
        return self.per_run is not None or self.per_thread_day is not None

    def check(
        self, record: RunRecord, before_today: float, reply_cap: int, messages: Sequence[Message] = ()
    ) -> str | None:
        """Why the next request must be the last (None: it may go ahead with tools). Room for two requests is
        kept: the next one, and the last answer after it. The tighter limit is the one named."""
        spent = record.cost_usd() or 0.0
        need = 2 * next_request_cost(record, reply_cap, messages)
        run_left = None if self.per_run is None else self.per_run - spent
        day_left = None if self.per_thread_day is None else self.per_thread_day - before_today - spent
        if day_left is not None and day_left < need and (run_left is None or day_left <= run_left):
            total = before_today + spent
            return (f"the thread's spend limit of ${self.per_thread_day:g} a day (limits.max_cost_per_thread_day) is "
                    f"reached: ${total:.4f} spent today")  # fmt: skip
        if run_left is not None and run_left < need:
            return f"the run's spend limit of ${self.per_run:g} (limits.max_cost) is reached: ${spent:.4f} spent"
        return None

    def exhausted(
        self, record: RunRecord, before_today: float, reply_cap: int, messages: Sequence[Message] = ()
    ) -> bool:
        """Not even a last answer fits."""
        spent = record.cost_usd() or 0.0
        last = spent + next_request_cost(record, reply_cap, messages)
        return (self.per_run is not None and last > self.per_run) or (
            self.per_thread_day is not None and before_today + last > self.per_thread_day
        )

    def label(self) -> str:
        parts = [f"${self.per_run:g} per run" if self.per_run is not None else "",
                 f"${self.per_thread_day:g} per thread a day" if self.per_thread_day is not None else ""]  # fmt: skip
        return " and ".join(p for p in parts if p)


def next_request_cost(record: RunRecord, reply_cap: int, messages: Sequence[Message] = ()) -> float:
    """What the next request may cost: a prompt the size of the last one (cache ignored), or before the run's
    first call a rough count of its messages (4 characters a token); a reply as long as the longest so far (at
    least 256 tokens), or at the cap before the first."""
    prices: Prices | None = record.prices
    if prices is None:
        return 0.0
    usages = [c["usage"] for c in record.model_calls if c.get("usage")]
    prompt = (
        int(usages[-1]["prompt_tokens"]) if usages else sum(len(str(m.get("content") or "")) for m in messages) // 4
    )
    longest = max((int(u.get("completion_tokens", 0)) for u in usages), default=reply_cap)
    reply = min(reply_cap, max(longest, MIN_REPLY_ESTIMATE)) if usages else reply_cap
    return prices.cost({"prompt_tokens": prompt, "completion_tokens": reply})
