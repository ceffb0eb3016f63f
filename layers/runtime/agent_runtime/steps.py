"""What a step of the loop returns (a small tagged result), and the live objects of one invocation (``Run``).

Apart from the loop so that the pieces around it — tool execution, reply shaping, hooks — can name them without
importing the loop.
"""

from __future__ import annotations

from dataclasses import dataclass

from .deadline import Deadline
from .record import RunRecord, RunState, RunStatus
from .run_context import RunContext
from .tools import ToolOutcome
from .workflows import Workflow


@dataclass(frozen=True, slots=True)
class Final:
    answer: str
    truncated: str | None = None  # why the answer stopped short (finish_reason "length"): which limit


@dataclass(frozen=True, slots=True)
class RanTools:
    outcomes: tuple[ToolOutcome, ...]


@dataclass(frozen=True, slots=True)
class Suspended:
    reason: str


@dataclass(frozen=True, slots=True)
class AwaitingApproval:
    calls: tuple[str, ...]  # ids of the calls that wait for a decision (later mutating calls wait behind them)
    reason: str = ""  # what they wait for, when not only approvals (a person to connect a provider)


@dataclass(frozen=True, slots=True)
class Stopped:
    status: RunStatus
    reason: str
    answer: str | None = None  # the model's last answer, when it gave one (at the tool-call cap)


StepResult = Final | RanTools | Suspended | AwaitingApproval | Stopped


@dataclass(slots=True)
class Run:
    """One invocation's live objects, handed to hooks."""

    workflow: Workflow
    state: RunState
    record: RunRecord
    context: RunContext
    deadline: Deadline
    output_cap: int | None = None  # the last model call's cap on its reply
