"""One ledger for everything a run causes: its own model calls, its compaction summaries and its helpers' calls.

Each call is priced when it is recorded, at the prices of the model that made it; a call whose endpoint reported
no usage (or usage that is not non-negative whole numbers) is charged an estimate — the prompt counted with the
model's tokenizer, the reply from its text — and marked so. A helper's ledger forwards every charge to its
parent's as it happens, so a spend limit sees a sub-agent's calls while it works, not after it returns. A request
under way holds what it may cost on the root ledger (set when the limit plans it, released once it is charged):
requests planned at once, by helpers working in parallel, each see what the others may still spend. A run that
suspends and resumes in another invocation starts its ledger from what it had spent (kept in its state).
"""

from __future__ import annotations

import math
import threading
from collections.abc import Mapping, MutableMapping
from typing import Any

from ..state import Slot

# What the run spent so far, by source, across its invocations; a new turn of a thread starts at zero.
SPENT: Slot[dict[str, float]] = Slot("spent_usd", dict, owner=__name__)
SOURCES = ("run", "compaction", "helpers", "search")  # where a charge comes from (search: the tool-search chooser);
# "estimated" sums the estimated ones
USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens", "cached_tokens")
NO_USAGE = "no usage reported"
BAD_USAGE = "usage not valid"
CUT_SHORT = "cut short"  # an attempt the server began answering, then cut: the prompt and what arrived


class Ledger:
    """The run's spend in dollars. Thread-safe: helpers charge from the threads their tool calls run in.

    The root ledger (the run's) carries the spend limit and what the thread spent today before this run; a
    helper's ledger finds both through its parent."""

    def __init__(self, state: MutableMapping[str, Any] | None = None) -> None:
        self._lock = threading.Lock()
        self._state = state
        before = SPENT.get(state) if state is not None else {}
        self._sums: dict[str, float] = {k: float(v) for k, v in before.items() if isinstance(v, int | float)}
        self.parent: Ledger | None = None
        self.limit: Any = None  # the run's spend.limit.SpendLimit, on the root ledger (the agent that owns it)
        self.before_today = 0.0  # the thread's spend today before this run (limits.max_cost_per_thread_day)
        self.planning = threading.Lock()  # on the root: one request planned at a time, its hold set before the next
        self._held: dict[int, float] = {}  # on the root: what each ledger's request under way may cost, by ledger

    def charge(self, dollars: float, *, source: str, estimated: bool = False) -> None:
        with self._lock:
            self._sums[source] = self._sums.get(source, 0.0) + dollars
            if estimated:
                self._sums["estimated"] = self._sums.get("estimated", 0.0) + dollars
            if self._state is not None:  # the checkpoint carries it to the next invocation
                SPENT.set(self._state, dict(self._sums))
        if self.parent is not None:
            self.parent.charge(dollars, source="helpers", estimated=estimated)

    def hold(self, dollars: float) -> None:
        """What this ledger's next request may cost, held on the root until :meth:`release` (replaces a hold)."""
        root = self.root()
        with root._lock:
            root._held[id(self)] = dollars

    def release(self) -> None:
        """The request was charged (or never sent): its hold goes."""
        root = self.root()
        with root._lock:
            root._held.pop(id(self), None)

    def committed(self, besides: Ledger | None = None) -> tuple[float, float]:
        """On the root: what was spent, and what the requests under way hold (but ``besides``'s), read at once."""
        with self._lock:
            spent = sum(value for key, value in self._sums.items() if key != "estimated")
            return spent, sum(v for k, v in self._held.items() if besides is None or k != id(besides))

    def total(self) -> float:
        with self._lock:
            return sum(value for key, value in self._sums.items() if key != "estimated")

    def breakdown(self) -> dict[str, float]:
        """Dollars by source (run, compaction, helpers), the estimated part, and the total."""
        with self._lock:
            parts = {key: round(value, 6) for key, value in self._sums.items()}
        return parts | {"total": round(sum(v for k, v in parts.items() if k != "estimated"), 6)}

    def root(self) -> Ledger:
        ledger = self
        while ledger.parent is not None:
            ledger = ledger.parent
        return ledger


def describe(breakdown: Mapping[str, float]) -> str:
    """``$0.1083 (helpers $0.0589, compaction $0.0012; $0.0040 estimated)``: the total and what is not the run's
    own calls."""
    parts = [f"{key} ${breakdown[key]:.4f}" for key in ("helpers", "compaction", "search") if breakdown.get(key)]
    estimated = breakdown.get("estimated") or 0.0
    said = ", ".join(parts)
    detail = said + ("; " if said and estimated else "") + (f"${estimated:.4f} estimated" if estimated else "")
    return f"${breakdown.get('total', 0.0):.4f}" + (f" ({detail})" if detail else "")


def usage_problem(usage: Any) -> str | None:
    """Why a reported usage cannot be priced (None: it can): missing, or not non-negative whole numbers."""
    if not isinstance(usage, Mapping):
        return NO_USAGE
    for key in USAGE_KEYS:
        value = usage.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            return BAD_USAGE
        if value < 0 or value != int(value):
            return BAD_USAGE
    return BAD_USAGE if usage.get("cached_tokens", 0) > usage.get("prompt_tokens", 0) else None
