"""The spend limit: ``limits.max_cost`` per run and ``limits.max_cost_per_thread_day`` per thread and UTC day,
in dollars from the exact ledger and the price table, checked before each model request.

A request that could take the run past its limit (its prompt at the last call's size, its reply at the cap) is
not made with tools: the model answers once without them, as at the tool-call cap, so a run ends at its limit
give or take that one request. Its state is kept: the next turn of the thread, with the limit raised, goes on
where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .models.prices import Prices
from .record import RunRecord

COST_NOTE = (
    "The workflow's spend limit ({limit}) is reached: no more tools can run. Answer now with what you have, and "
    "say briefly what is left undone."
)


@dataclass(frozen=True, slots=True)
class SpendLimit:
    per_run: float | None = None
    per_thread_day: float | None = None
    thread_spent: Callable[[str], float] = lambda run_id: 0.0  # the thread's other runs today (once per run)

    def __bool__(self) -> bool:
        return self.per_run is not None or self.per_thread_day is not None

    def check(self, record: RunRecord, before_today: float, reply_cap: int) -> str | None:
        """Why the next request must be the last (None: it may go ahead with tools)."""
        spent = record.cost_usd() or 0.0
        next_call = next_request_cost(record, reply_cap)
        if self.per_run is not None and spent + next_call > self.per_run:
            return f"the run's spend limit of ${self.per_run:g} (limits.max_cost) is reached: ${spent:.4f} spent"
        if self.per_thread_day is not None and before_today + spent + next_call > self.per_thread_day:
            total = before_today + spent
            return (f"the thread's spend limit of ${self.per_thread_day:g} a day (limits.max_cost_per_thread_day) is "
                    f"reached: ${total:.4f} spent today")  # fmt: skip
        return None

    def exhausted(self, record: RunRecord, before_today: float) -> bool:
        """Nothing is left, not even for a last answer."""
        spent = record.cost_usd() or 0.0
        return (self.per_run is not None and spent >= self.per_run) or (
            self.per_thread_day is not None and before_today + spent >= self.per_thread_day
        )

    def label(self) -> str:
        parts = [f"${self.per_run:g} per run" if self.per_run is not None else "",
                 f"${self.per_thread_day:g} per thread a day" if self.per_thread_day is not None else ""]  # fmt: skip
        return " and ".join(p for p in parts if p)


def next_request_cost(record: RunRecord, reply_cap: int) -> float:
    """What the next request may cost: a prompt the size of the last one (cache ignored), a reply at the cap."""
    prices: Prices | None = record.prices
    if prices is None:
        return 0.0
    last = next((c.get("usage") for c in reversed(record.model_calls) if c.get("usage")), None) or {}
    return prices.cost({"prompt_tokens": int(last.get("prompt_tokens", 0)), "completion_tokens": reply_cap})
