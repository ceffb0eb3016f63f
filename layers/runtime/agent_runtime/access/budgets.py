"""Budgets per person, team and workflow (``limits.max_cost_per_{person,team,workflow}_{day,month}``): what each
has spent on a workflow in a UTC day and month, and the limits a new run starts under.

The tally is one item per run in a partition per workflow and month (``budget#<workflow>#<YYYY-MM>``), written with
the run's whole cost so far each time one of its invocations ends: a redelivery or a resumed run overwrites its own
item, never adds twice. A run is tallied in the month and day it started. Reading a period is one query of that
partition (its runs' items, a few hundred bytes each). Two runs of one person at once each see the other's cost
only once it has ended an invocation, as the thread's daily limit does: a budget holds to within the runs that
overlap.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from ..spend import Scope
from ..stores.base import Store
from ..workflows import Workflow
from ..workflows.budgets import Budget
from .principal import Requester

TTL = 62 * 24 * 3600  # a month's items outlive the month (the next one's first days read none of them)
PERIOD_WORDS = {"day": "a day (UTC)", "month": "a month (UTC)"}


@dataclass(frozen=True, slots=True)
class Charge:
    run_id: str
    person: str
    teams: tuple[str, ...]
    day: str  # YYYY-MM-DD (UTC) the run started
    usd: float


def partition(workflow: str, month: str) -> str:
    return f"budget#{workflow}#{month}"


class BudgetBook:
    """One workflow's tallies in ``store`` for the UTC ``day`` (YYYY-MM-DD) and its month: the day a run starts,
    when it is checked or charged."""

    def __init__(self, store: Store, workflow: Workflow, day: str) -> None:
        self.store, self.workflow, self.budgets, self.day = store, workflow.name, workflow.limits.budgets, day
        self._charges: list[Charge] | None = None

    def charges(self) -> list[Charge]:
        """This month's runs of the workflow, each with its cost so far (read once)."""
        if self._charges is None:
            items = self.store.items(partition(self.workflow, self.day[:7]))
            self._charges = [_charge(name, item.data) for name, item in items.items() if name.startswith("run#")]
        return self._charges

    def scopes(self, who: Requester, teams: Iterable[str], run_id: str) -> tuple[Scope, ...]:
        """The budgets this run starts under, each with what the scope's other runs spent in its period."""
        if not self.budgets:
            return ()
        teams = tuple(teams)
        found = []
        for budget in self.budgets.each:
            for key in _keys(budget, who, teams):
                spent = sum(c.usd for c in self._within(budget, key) if c.run_id != run_id)
                found.append(Scope(budget.dollars, spent, self._label(budget, key), self._raise(budget)))
        return tuple(found)

    def refused(self, who: Requester, teams: Iterable[str], run_id: str, need: float = 0.0) -> Scope | None:
        """The first budget that cannot pay ``need`` (the least a run costs: ``spend.smallest_run``) before the run
        starts (None: every one has room)."""
        return short_of(self.scopes(who, teams, run_id), need)

    def charge(self, run_id: str, who: Requester, teams: Iterable[str], usd: float) -> None:
        """The run's whole cost so far (each invocation's end, ``day`` the day it started): its own item,
        overwritten."""
        if not self.budgets:
            return
        where = partition(self.workflow, self.day[:7])
        data = {"person": who.person, "teams": list(teams), "day": self.day, "usd": round(float(usd), 8)}
        self.store.put_latest(where, f"run#{run_id}", data, ttl=TTL)
        self._charges = None

    def _within(self, budget: Budget, key: str) -> list[Charge]:
        def mine(charge: Charge) -> bool:
            return (
                key == charge.person
                if budget.scope == "person"
                else key in charge.teams
                if budget.scope == "team"
                else True
            )

        return [c for c in self.charges() if mine(c) and (budget.period == "month" or c.day == self.day)]

    def _label(self, budget: Budget, key: str) -> str:
        whose = {"person": f"{key}'s", "team": f"the {key} team's", "workflow": "the workflow's"}[budget.scope]
        return (
            f"{whose} budget of ${budget.dollars:g} {PERIOD_WORDS[budget.period]} for {self.workflow} "
            f"(limits.{budget.key})"
        )

    def _raise(self, budget: Budget) -> str:
        where = f"workflows/{self.workflow}.yaml"
        return f"raise limits.{budget.key} in {where} to go on, or wait for the next {budget.period} (UTC)"


def _keys(budget: Budget, who: Requester, teams: tuple[str, ...]) -> tuple[str, ...]:
    return {"person": (who.person,), "team": teams, "workflow": ("",)}[budget.scope]


def _charge(name: str, data: dict[str, object]) -> Charge:
    teams = data.get("teams")
    usd = data.get("usd")
    return Charge(
        name.removeprefix("run#"),
        str(data.get("person") or ""),
        tuple(str(t) for t in teams) if isinstance(teams, list) else (),
        str(data.get("day") or ""),
        float(usd) if isinstance(usd, int | float) and not isinstance(usd, bool) else 0.0,
    )


def short_of(scopes: Iterable[Scope], need: float = 0.0) -> Scope | None:
    """The first of ``scopes`` with nothing left, or less than ``need``."""
    return next((scope for scope in scopes if scope.left() <= 0 or scope.left() < need), None)


def refusal_text(scope: Scope, need: float = 0.0) -> str:
    """What the person is told when a budget stops a run before it starts: who, which limit, what is left (and
    what the least of a run needs, when that is more), how to go on."""
    left = scope.left()
    short = f", less than the least a run needs (about ${need:.4f})" if 0 < left < need else ""
    return (
        f"Not started: {scope.reached()}; ${max(left, 0):.4f} is left{short}. "
        f"{scope.raise_it[:1].upper()}{scope.raise_it[1:]}."
    )


def today(now: float) -> str:
    return time.strftime("%Y-%m-%d", time.gmtime(now))
