"""Budgets beside ``limits.max_cost`` (a run) and ``max_cost_per_thread_day`` (a thread): dollars a person, a team
and the whole workflow may spend on it in a UTC day and a UTC month.

```yaml
limits:
  max_cost_per_person_day: 2        # each requester's runs of this workflow, today (UTC)
  max_cost_per_person_month: 20     # ... this calendar month (UTC)
  max_cost_per_team_month: 200      # each access group's members' runs together (access.groups)
  max_cost_per_workflow_month: 1000 # everyone's runs of this workflow
```

A team is an access group (``workflows/access.py``): a run counts for every group its requester is in. The tallies
and the checks are ``agent_runtime.access.budgets``'; here they are only read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

SCOPES = ("person", "team", "workflow")
PERIODS = ("day", "month")
BUDGET_KEYS = tuple(f"max_cost_per_{scope}_{period}" for scope in SCOPES for period in PERIODS)


@dataclass(frozen=True, slots=True)
class Budget:
    scope: str  # person | team | workflow
    period: str  # day | month
    dollars: float

    @property
    def key(self) -> str:
        """Its key under ``limits:`` (what a refusal names, and where to raise it)."""
        return f"max_cost_per_{self.scope}_{self.period}"


@dataclass(frozen=True, slots=True)
class Budgets:
    each: tuple[Budget, ...] = ()

    @property
    def team(self) -> bool:
        return any(budget.scope == "team" for budget in self.each)

    def __bool__(self) -> bool:
        return bool(self.each)


def parse_budgets(data: Mapping[str, object], dollars: Callable[[str], float | None]) -> Budgets:
    """The ``limits`` keys that are budgets, each read by ``dollars`` (the section's own number check)."""
    found = []
    for key in BUDGET_KEYS:
        value = dollars(key) if key in data else None
        if value is not None:
            scope, period = key.removeprefix("max_cost_per_").split("_")
            found.append(Budget(scope, period, value))
    return Budgets(tuple(found))
