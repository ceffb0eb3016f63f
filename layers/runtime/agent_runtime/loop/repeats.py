"""A call that keeps failing the same way is not run again: once a tool has failed ``MAX_SAME_FAILURES`` times in a
row with the same arguments in a run, the next identical call is answered with a tool error saying so, without
running. A model that loops on an unreadable file would otherwise spend the whole tool-call cap (and its tokens)
on calls whose answer it already has.

The refusal is an answer like any other: it counts toward ``limits.max_tool_calls``. Only calls that reached the
tools count as failures (a call a gate refused, an approval denied, never ran); a success of the same call starts
the count again. Registered before the checkpoints' hook, so a refused mutating call is never journalled, and after
the approval gate, which it leaves alone. The counts live in the run state: a resumed run keeps them, a thread's
next run starts without them.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, cast

from ..hooks import Hook
from ..state import Slot
from ..tools import ToolOutcome, error_text

if TYPE_CHECKING:
    from ..models import ToolCall
    from ..steps import Run

MAX_SAME_FAILURES = 2  # the first repeat may be a transient failure; the second repeat is refused

# {"run": run id, "failed": {call key: failures in a row}}
FAILURES: Slot[dict[str, Any]] = Slot("repeated_failures", dict, owner=__name__)
REFUSAL = (
    "not run: {tool} already failed {times} times in this run with these same arguments, and would fail the same "
    "way. Stop calling it with these arguments: say in your answer that it failed, or try something else."
)


def call_key(call: ToolCall) -> str:
    """The tool and its arguments, however the model spaced or ordered them."""
    try:
        arguments = json.dumps(json.loads(call.arguments or "{}"), sort_keys=True)
    except json.JSONDecodeError:
        arguments = call.arguments
    return hashlib.sha256(f"{call.name}\n{arguments}".encode()).hexdigest()[:16]


class RepeatedFailures(Hook):
    """Refuses a call identical to one that failed ``limit`` times in a row in this run."""

    def __init__(self, limit: int = MAX_SAME_FAILURES) -> None:
        self.limit = limit
        self._ran: dict[str, str] = {}  # call id -> key: calls let through that no hook answered before us
        self._refused: set[str] = set()

    def on_run_start(self, run: Run) -> None:
        self._ran.clear()
        self._refused.clear()

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        key = call_key(call)
        failed = self._failed(run)
        pending = sum(1 for ran in self._ran.values() if ran == key)  # identical calls of this batch, still running
        times = failed.get(key, 0)
        if times == 0 or times + pending < self.limit:
            self._ran[call.id] = key
            return None
        self._refused.add(call.id)
        return ToolOutcome(call, error_text(REFUSAL.format(tool=call.name, times=times)), is_error=True)

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        key = self._ran.pop(outcome.call.id, None)
        if outcome.call.id in self._refused:
            self._refused.discard(outcome.call.id)
        elif key is not None:  # it reached the tools (or a later hook answered for them: the same each time)
            failed = self._failed(run)
            if outcome.is_error:
                failed[key] = failed.get(key, 0) + 1
            else:
                failed.pop(key, None)
        return outcome

    def _failed(self, run: Run) -> dict[str, int]:
        state = FAILURES.use(run.state.context)
        if state.get("run") != run.state.run_id:  # a thread's next run starts afresh
            state.clear()
            state.update(run=run.state.run_id, failed={})
        return cast(dict[str, int], state["failed"])
