"""The spend limit: ``limits.max_cost`` per run and ``limits.max_cost_per_thread_day`` per thread and UTC day,
in dollars from the run's ledger (its own calls, compaction summaries and helpers) and the price table.

Before each request the limit says how long a reply the run can still afford: room is kept for the request and a
last answer after it, each a prompt the size of the next one and a reply at the cap, so the reply cap shrinks as
the limit nears (as the answer reserve shrinks for small windows). When not even a short reply fits twice, the
model answers once without tools, if that answer fits; so a run ends at its limit give or take one request. The
request's cost at its cap is held on the run's ledger from the moment it is planned until it is charged, so
requests under way at once (helpers working in parallel) share what is left instead of each planning on all of
it: the limit holds within one request however many run together. Its state is kept: the next turn of the thread,
with the limit raised, goes on where it stopped.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..messages import Message
from ..models.prices import Prices
from ..state import Slot
from .ledger import Ledger


class Recorded(Protocol):
    """What the limit reads of a run's record (record.RunRecord): its ledger, prices and calls so far."""

    ledger: Ledger
    prices: Prices | None
    model_calls: list[dict[str, Any]]


# An approver's grant ("continue with $N more") is the run's own limit, kept in the run's state so the run keeps it
# when it suspends and resumes in another invocation; a new turn of the thread starts without it.
GRANTED: Slot[float] = Slot("spend_granted", float, owner=__name__)

MIN_REPLY = 256  # tokens: the shortest reply worth asking for (a tool call, or a few sentences of an answer)
COST_NOTE = (
    "The workflow's spend limit ({limit}) is reached: no more tools can run. Answer now with what you have, and "
    "say briefly what is left undone."
)


@dataclass(frozen=True, slots=True)
class GoOn:
    """How a person goes on past the run's own limit and the thread's day, where the run was asked: said at the
    end of the reason a run stops there. The CLI's (``HOW_TO_GO_ON``) unless the process knows better (the
    service's: ``service.grants.go_on``, whether the workflow names anyone who may grant more)."""

    run: str  # limits.max_cost
    thread_day: str  # limits.max_cost_per_thread_day


HOW_TO_GO_ON = GoOn(
    run="each run has its own limit (limits.max_cost): go on with run --thread ID, and --max-cost N for a larger one",
    thread_day="raise limits.max_cost_per_thread_day in the workflow to go on, or wait for the next day (UTC)",
)


def cli_go_on(run: str, thread: str) -> GoOn:
    """The CLI's words naming the thread the run was in (``run``: the command that runs the workflow; a run
    without -t is its own thread, named by its run id), so the next command can be copied as it is said."""
    again = f"{run} --thread {shlex.quote(thread)} --message 'go on'"
    return GoOn(
        run=f"each run has its own limit (limits.max_cost): go on with {again}, and --max-cost N for a larger one",
        thread_day=HOW_TO_GO_ON.thread_day,
    )


@dataclass(frozen=True, slots=True)
class Estimate:
    """What the next request may cost before its reply: its prompt, in tokens and dollars."""

    prompt_tokens: int
    prompt_usd: float
    per_reply_token: float  # dollars

    def cost(self, reply_tokens: int) -> float:
        return self.prompt_usd + reply_tokens * self.per_reply_token

    def affordable(self, dollars: float) -> int:
        """The longest reply ``dollars`` pays for with this prompt (a large number when replies are free)."""
        if dollars < self.prompt_usd:
            return 0
        return 1 << 30 if self.per_reply_token <= 0 else int((dollars - self.prompt_usd) / self.per_reply_token)


@dataclass(frozen=True, slots=True)
class Scope:
    """A budget beyond the run and its thread (a person's, a team's, the workflow's, for a day or a month): its
    limit, what its other runs spent in the period before this one, and the sentence that names it and how to
    raise it."""

    limit: float
    before: float
    label: str  # "slack:U0123's budget of $20 a month for incident-helper (limits.max_cost_per_person_month)"
    raise_it: str = "raise its limit to go on"  # "raise limits.max_cost_per_person_month in workflows/x.yaml ..."

    def left(self, spent: float = 0.0, held: float = 0.0) -> float:
        return self.limit - self.before - spent - held

    def reached(self, spent: float = 0.0, busy: str = "") -> str:
        return f"{self.label} is reached: ${self.before + spent:.4f} spent{busy}"


@dataclass(frozen=True, slots=True)
class SpendLimit:
    per_run: float | None = None
    per_thread_day: float | None = None
    thread_spent: Callable[[str], float] = lambda run_id: 0.0  # the thread's other runs today (once per run)
    granted: float = 0.0  # an approver's "continue with $N more" in the message that started this run
    scopes: tuple[Scope, ...] = ()  # budgets per person, team and workflow (access.budgets), as the run started
    go_on: GoOn = HOW_TO_GO_ON

    def __bool__(self) -> bool:
        return self.per_run is not None or self.per_thread_day is not None or bool(self.scopes)

    def room(self, spent: float, before_today: float, held: float = 0.0) -> tuple[float, str]:
        """Dollars left under the tightest limit (what requests under way hold is not left), and the sentence that
        names it."""
        return self._room(spent, before_today, held)[:2]

    def _room(self, spent: float, before_today: float, held: float) -> tuple[float, str, str]:
        busy = f" and ${held:.4f} held by requests under way" if held > 0 else ""
        options: list[tuple[float, str, str]] = []
        if self.per_thread_day is not None:
            total = before_today + spent
            why = f"the thread's spend limit of ${self.per_thread_day:g} a day (limits.max_cost_per_thread_day) is "
            reached = f"{why}reached: ${total:.4f} spent today{busy}"
            options.append((self.per_thread_day - total - held, reached, self.go_on.thread_day))
        if self.per_run is not None:
            why = f"the run's spend limit of ${self.per_run:g} (limits.max_cost) is reached: ${spent:.4f} spent{busy}"
            options.append((self.per_run - spent - held, why, self.go_on.run))
        options += [(scope.left(spent, held), scope.reached(spent, busy), scope.raise_it) for scope in self.scopes]
        assert options, "a spend limit with no limit"
        return min(options, key=lambda option: option[0])  # the first of equals: the thread's day, then the run's

    def reply_cap(
        self, spent: float, before_today: float, cap: int, estimate: Estimate, held: float = 0.0
    ) -> int | str:
        """The reply cap of the next request, with room kept for a last answer after it; or why it must be the
        last."""
        left, why, raise_it = self._room(spent, before_today, held)
        tokens = estimate.affordable(left / 2)
        if tokens >= min(cap, MIN_REPLY):
            return min(cap, tokens)
        need = 2 * estimate.cost(min(cap, MIN_REPLY))
        left_text = f"${max(left, 0):.4f} is left: {raise_it}"
        return f"{why}; the next request and a last answer need about ${need:.4f}, and {left_text}"

    def last_cap(self, spent: float, before_today: float, cap: int, estimate: Estimate, held: float = 0.0) -> int | str:
        """The reply cap of a last answer; or, when not even that fits, what was reserved and how to go on."""
        left, why, raise_it = self._room(spent, before_today, held)
        tokens = estimate.affordable(left)
        if tokens >= min(cap, MIN_REPLY):
            return min(cap, tokens)
        need = estimate.cost(min(cap, MIN_REPLY))
        return (
            f"{why}; not even a last answer fits: a request of about {estimate.prompt_tokens:,} prompt tokens "
            f"and a reply of {min(cap, MIN_REPLY)} tokens needs about ${need:.4f}, and ${max(left, 0):.4f} "
            f"is left: {raise_it}"
        )

    def label(self) -> str:
        parts = [
            f"${self.per_run:g} per run" if self.per_run is not None else "",
            f"${self.per_thread_day:g} per thread a day" if self.per_thread_day is not None else "",
            *(scope.label for scope in self.scopes),
        ]
        return " and ".join(p for p in parts if p)


def estimate_next(
    prices: Prices | None, calls: Sequence[dict[str, object]], messages: Sequence[Message] = ()
) -> Estimate:
    """The next request's prompt: the last call's prompt and reply plus what joined the history after it (the tool
    results, 4 characters a token), uncached; before the run's first call, its messages at 4 characters a token."""
    usages = [c["usage"] for c in calls if isinstance(c.get("usage"), dict) and c.get("purpose") != "compaction"]
    tail = 0
    for message in reversed(messages):
        if message.get("role") == "assistant":
            break
        tail += len(str(message.get("content") or ""))
    if usages:
        last: dict[str, int] = usages[-1]  # type: ignore[assignment]
        prompt = int(last.get("prompt_tokens", 0)) + int(last.get("completion_tokens", 0)) + tail // 4
    else:
        prompt = sum(len(str(m.get("content") or "")) for m in messages) // 4
    if prices is None:
        return Estimate(prompt, 0.0, 0.0)
    return Estimate(prompt, prices.cost({"prompt_tokens": prompt}), prices.output / 1e6)


def smallest_run(prices: Prices | None, prompt: str) -> float:
    """The least a run needs before it starts, as ``request_cap`` plans its first request: room for that request
    and a last answer, each a prompt of the workflow's own prompt alone and a reply of MIN_REPLY tokens (0 when
    the price is unknown). A budget with less left than this admits no run."""
    estimate = estimate_next(prices, [], [{"role": "system", "content": prompt}])
    return 2 * estimate.cost(MIN_REPLY)


def request_cap(record: Recorded, messages: Sequence[Message], cap: int) -> int | str:
    """The reply cap of the run's next request under the spend limit of the run it belongs to (a helper's is its
    parent's, checked against everything the parent's run has spent), or why it must be the last."""
    return _capped(record, messages, cap, last=False)


def last_answer_cap(record: Recorded, messages: Sequence[Message], cap: int) -> int | str:
    """The reply cap of a last answer without tools, or why not even that fits (what it needs, how to go on)."""
    return _capped(record, messages, cap, last=True)


def _capped(record: Recorded, messages: Sequence[Message], cap: int, *, last: bool) -> int | str:
    """The cap, planned against what was spent and what other requests under way hold; the request's cost at it
    is then held (on the root ledger, until Agent.complete charges the call) before another request is planned."""
    root = record.ledger.root()
    limit: SpendLimit | None = root.limit
    if limit is None:
        return cap
    estimate = estimate_next(record.prices, record.model_calls, messages)
    plan = limit.last_cap if last else limit.reply_cap
    with root.planning:
        spent, held = root.committed(besides=record.ledger)
        allowed = plan(spent, root.before_today, cap, estimate, held)
        if isinstance(allowed, int):
            record.ledger.hold(estimate.cost(allowed))
        else:
            record.ledger.release()
    return allowed
