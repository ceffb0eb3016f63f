"""The access rules inside a run: who it is for, kept in its state; the start decision in its record; and the
check before each call of a declared tool (a tool the requester's groups do not reach is not offered, and a call
to one is refused all the same — the model may name a tool it was never shown)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..events import AccessDecided
from ..hooks import Hook
from ..state import Slot
from .principal import Requester
from .rules import Access, Verdict

if TYPE_CHECKING:
    from ..models import ToolCall
    from ..steps import Run
    from ..tools.registry import ToolOutcome

# Who the run is for, as it started (its person, groups and UTC day): kept for its later invocations, its budgets'
# tally and its figures, whatever the rules say by then.
ACCESS: Slot[dict[str, Any]] = Slot("access", dict, owner=__name__)


@dataclass(frozen=True)
class RunAccess:
    """One run's access: the workflow's rules, its requester, the start decision, the day it started."""

    access: Access
    who: Requester
    start: Verdict
    day: str

    def offered(self) -> Callable[[str], bool] | None:
        return self.access.offered(self.who)


def kept(context: Mapping[str, Any], run_id: str) -> dict[str, Any]:
    """Who ``run_id`` was for (person, groups, day), from its state; empty when it has no access (no rules)."""
    state = ACCESS.get(context)
    return dict(state) if state.get("run") == run_id else {}


def recorded(verdict: Verdict, turn: int = 0) -> AccessDecided:
    return AccessDecided(
        action=verdict.action,
        allowed=verdict.allowed,
        who=verdict.who,
        groups=list(verdict.groups),
        reason=verdict.reason,
        tool=verdict.tool,
        turn=turn,
    )


class AccessHook(Hook):
    """Records the start decision once and refuses calls of declared tools outside the requester's set."""

    def __init__(self, run_access: RunAccess, declared: frozenset[str]) -> None:
        self.run_access, self.declared = run_access, declared

    def on_run_start(self, run: Run) -> None:
        state = ACCESS.use(run.state.context)
        if state.get("run") == run.state.run_id:
            return  # a later invocation: decided when the run started (a thread's next turn is a new run)
        start = self.run_access.start
        state.clear()
        state.update(run=run.state.run_id, person=start.who, groups=list(start.groups), day=self.run_access.day)
        run.record.event(recorded(start))

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        if call.name not in self.declared:
            return None
        verdict = self.run_access.access.may_call(self.run_access.who, call.name)
        if verdict.allowed:
            return None
        run.record.event(recorded(verdict, run.state.turn))
        # Imported with the first refusal: the worker's init admits runs (RunAccess) without the tools' machinery.
        from ..tools.registry import ToolOutcome, error_text

        return ToolOutcome(call, error_text(f"not run: {verdict.reason}. Do not retry it."), True)
