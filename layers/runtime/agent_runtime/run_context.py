"""What a tool sees of the run it serves (pydantic-ai's ``RunContext``): ids, deadline, stores."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from .deadline import Deadline
from .events import RunEvent
from .state import Slot

if TYPE_CHECKING:  # an annotation only: the file tools import this module, the run context no file code
    from .files import FileStore

# The id of the tool call running in this thread (set by the registry while a tool runs): a helper started by a
# ``subagent`` call finds the call that started it, even when several run at once.
CURRENT_CALL: ContextVar[str | None] = ContextVar("agent_runtime_current_call", default=None)


class SubagentSummary(TypedDict):
    run_id: str
    status: str
    tool_calls: int
    tokens: int
    model: str


# The helpers this run started (the subagent tool appends; the budget numbers the next one from it).
SUBAGENTS: Slot[list[SubagentSummary]] = Slot("subagents", list, owner=__name__)


class Ledger(Protocol):
    """What tools see of the context engine: the budget, token counts, and the record of reads."""

    def remaining_tokens(self) -> int: ...

    def count(self, text: str) -> int: ...

    def file_lines(self, file_id: str) -> int | None:
        """The file's line count if known (sized once per run), so a range read need not scan to the end."""
        ...

    def record_read(
        self, file_id: str, *, tool: str, lines: tuple[int, int] | None = None, bytes_: tuple[int, int] | None = None
    ) -> None: ...


class Reporter(Protocol):
    def __call__(self, event: RunEvent, child: dict[str, Any] | None = None) -> None: ...


class ToolBudget:
    """The run's tool-call cap, shared safely by calls running in parallel (sub-agents reserve from it).

    ``pending`` counts the calls of the step under way that are allowed but not yet counted, so a helper never
    spends the calls its own siblings were promised."""

    def __init__(self, limit: int, used: Callable[[], int], spend: Callable[[int], None], children: int = 0) -> None:
        self.limit, self._used, self._spend = limit, used, spend
        self._lock = threading.Lock()
        self.pending = 0
        self.reserved = 0
        self._children = children

    def reserve(self, wanted: int) -> int:
        """Up to ``wanted`` calls, taken from what is left; 0 when nothing is."""
        with self._lock:
            left = self.limit - self._used() - self.pending - self.reserved
            granted = max(0, min(wanted, left))
            self.reserved += granted
            return granted

    def settle(self, granted: int, spent: int) -> None:
        """Give back a reservation and count what was really spent."""
        with self._lock:
            self.reserved -= granted
            self._spend(spent)

    def child_id(self, run_id: str) -> str:
        """A run id for the next helper, unique even when helpers start at once."""
        with self._lock:
            self._children += 1
            return f"{run_id}.sub{self._children}"


@dataclass(slots=True)
class RunContext:
    """Passed to any tool parameter annotated ``RunContext``; hidden from the model's schema."""

    run_id: str
    workflow: str
    files: FileStore
    deadline: Deadline = field(default_factory=Deadline.none)
    ledger: Ledger | None = None  # set by the context engine; None means no budget checks
    state: dict[str, Any] = field(default_factory=dict)  # JSON, persisted with the run (RunState.context)
    budget: ToolBudget | None = None  # the tool-call cap, for tools that spend calls of their own
    # Adds an event to the run's record, and a helper's own record as a child: report(event, child=record_dict).
    report: Reporter | None = None
    spend: Any = None  # the run's spend ledger (spend.Ledger): a helper's ledger charges it as the helper spends
    stop: Callable[[], Any] = lambda: None  # the run's stop request (stopping.StopRequest), if someone asked
