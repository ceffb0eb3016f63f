"""Who may do what (issue 53): the rules of a workflow's ``access:`` section evaluated for a requester — who may
start it, who may decide its approvals, which declared tools a run is offered — and the budgets per person, team
and workflow (``limits.max_cost_per_*``), tallied in the store.

Each decision is a ``Verdict`` a caller records (the run's ``AccessDecided`` events) or tells (a refusal, privately).
A workflow without rules passes every check: no rule, no decision to make.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .budgets import BudgetBook, refusal_text, short_of, today
    from .hook import AccessHook, RunAccess, kept
    from .principal import Directory, DirectoryError, NoDirectory, Requester
    from .rules import Access, Verdict

# Lazy (PEP 562): the webhook decides admission with the rules alone, without the hook's tool machinery or the
# budgets' store.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "BudgetBook": ".budgets",
        "refusal_text": ".budgets",
        "short_of": ".budgets",
        "today": ".budgets",
        "AccessHook": ".hook",
        "RunAccess": ".hook",
        "kept": ".hook",
        "Directory": ".principal",
        "DirectoryError": ".principal",
        "NoDirectory": ".principal",
        "Requester": ".principal",
        "Access": ".rules",
        "Verdict": ".rules",
    },
)

__all__ = [
    "Access",
    "AccessHook",
    "BudgetBook",
    "Directory",
    "DirectoryError",
    "NoDirectory",
    "Requester",
    "RunAccess",
    "Verdict",
    "kept",
    "refusal_text",
    "short_of",
    "today",
]
