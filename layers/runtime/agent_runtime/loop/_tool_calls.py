"""Running a model turn's tool calls: read-only calls together (at most MAX_PARALLEL_TOOLS at once), a mutating one
alone and in order, each approved first when its tool asks for it, every call answered (results, refusals past
the tool-call cap, reasons for calls that could not run), and the run's count of calls kept.

The loop hands over the calls and gets back a step result; hooks see every call before it runs and every result
before it joins the history.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from .. import messages as msgs
from ..approvals.gate import ApprovalGate, CallGate, Decision
from ..hooks import HookChain
from ..models import ToolCall
from ..record import RunStatus
from ..steps import AwaitingApproval, RanTools, Run, StepResult, Stopped, Suspended
from ..tools import ToolOutcome, ToolRegistry, error_text

MAX_PARALLEL_TOOLS = 4


class ToolCalls:
    """The tools of a run, its hooks, its approval gate (None: calls that need approval run) and the other gates a
    call waits at (the requester's connection to a provider)."""

    def __init__(
        self, tools: ToolRegistry, hooks: HookChain, approvals: ApprovalGate | None, gates: Sequence[CallGate] = ()
    ) -> None:
        self.tools, self.hooks = tools, hooks
        self.gates: list[CallGate] = [*([approvals] if approvals is not None else []), *gates]
        self._for: list[str] = []  # what the waiting calls of the turn under way wait for

    def run(self, run: Run, calls: list[ToolCall], broken: dict[str, str] | None = None) -> StepResult:
        """Answer every call, in order: run (read-only ones together), refuse past the cap, wait for a person."""
        limit = run.workflow.limits.max_tool_calls
        allowed = max(0, limit - run.state.tool_calls_used)
        runnable, refused = calls[:allowed], calls[allowed:]
        broken = broken or {}
        outcomes: list[ToolOutcome] = []
        waiting: list[str] = []
        self._for = []
        if run.context.budget is not None:  # allowed, not yet counted: helpers must not spend them
            run.context.budget.pending = len(runnable)
        for batch in self._batches(runnable, broken):
            if batch[0].id in broken:  # cut off, or arguments not JSON: answered with the reason, in call order
                error = ToolOutcome(call=batch[0], content=error_text(broken[batch[0].id]), is_error=True)
                outcomes.append(self._append(run, error, counted=False))  # not run: not counted
                continue
            if run.deadline.expired():
                return Suspended(f"the deadline was reached with {len(calls) - len(outcomes)} tool call(s) pending")
            if waiting and self._is_mutating(batch[0]):
                waiting.append(batch[0].id)  # effects stay in order: it runs after the one being decided
                continue
            outcomes.extend(self._execute(run, self._approved(run, batch, waiting)))
        if refused:
            self._refuse_beyond_cap(run, refused, limit, ran=len(runnable))
        if waiting:
            only_approvals = all(reason.startswith("approval of ") for reason in self._for)
            said = "" if only_approvals else "awaiting " + "; ".join(dict.fromkeys(self._for))
            return AwaitingApproval(tuple(waiting), said)
        if refused:
            return Stopped(
                RunStatus.TOOL_CALL_LIMIT,
                f"Stopped: the workflow allows {limit} tool calls (limits.max_tool_calls) and the model asked "
                f"for more. {len(refused)} call(s) were not run.",
            )
        return RanTools(tuple(outcomes))

    def _refuse_beyond_cap(self, run: Run, refused: list[ToolCall], limit: int, *, ran: int) -> None:
        """The calls past the cap leave the assistant message but the first, whose one result says what did not
        run: 1,000 refused calls cost a line, not 1,000 results (the window could not hold them). The record lists
        each of them."""
        index = len(run.state.messages) - 1 - tail_results(run.state.messages)
        message, gone = run.state.messages[index], {call.id for call in refused[1:]}
        if message["role"] == "assistant" and gone:
            kept = [call for call in message.get("tool_calls", []) if call["id"] not in gone]
            run.state.messages[index] = {**message, "tool_calls": kept}
        counts: dict[str, int] = {}
        for call in refused:
            counts[call.name] = counts.get(call.name, 0) + 1
        names = ", ".join(f"{n} {name}" for name, n in counts.items())
        reason = (
            f"not run: this call and {len(refused) - 1} more ({names}): the workflow's limit of {limit} tool calls "
            f"(limits.max_tool_calls) was reached after {ran} ran in this turn"
            if len(refused) > 1
            else f"not run: the workflow's limit of {limit} tool calls (limits.max_tool_calls) was reached"
        )
        self._append(run, ToolOutcome(call=refused[0], content=error_text(reason), is_error=True), counted=False)
        for call in refused[1:]:  # audited, never sent again
            run.record.tool_calls.append(
                {
                    "turn": run.state.turn,
                    "executed": False,
                    "id": call.id,
                    "name": call.name,
                    "is_error": True,
                    "refused": "limit",
                    **self._unknown(call),
                }
            )

    def _batches(self, calls: list[ToolCall], alone: dict[str, str]) -> list[list[ToolCall]]:
        # Read-only calls run together; a mutating call runs alone, in order, so its effects stay ordered.
        batches: list[list[ToolCall]] = []
        for call in calls:
            apart = call.id in alone or (batches and batches[-1][0].id in alone)
            if not batches or apart or self._is_mutating(call) or self._is_mutating(batches[-1][0]):
                batches.append([call])
            else:
                batches[-1].append(call)
        return batches

    def _execute(self, run: Run, batch: list[ToolCall]) -> list[ToolOutcome]:
        answered = {call.id: self.hooks.before_tool_call(run, call) for call in batch}
        todo = [call for call in batch if answered[call.id] is None]
        if len(todo) <= 1:
            ran = [self.tools.execute(call, run.context) for call in todo]
        else:
            with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_TOOLS, len(todo))) as pool:
                ran = list(pool.map(lambda call: self.tools.execute(call, run.context), todo))
        by_id = {outcome.call.id: outcome for outcome in ran}
        return [self._append(run, answered[call.id] or by_id[call.id]) for call in batch]

    def _approved(self, run: Run, batch: list[ToolCall], waiting: list[str]) -> list[ToolCall]:
        """The calls of a batch that may run now: those every gate lets through (an approval, the requester's
        connection). A denied or expired call is answered with why; an undecided one waits (unanswered) and the
        run will say so."""
        runnable = []
        for call in batch:
            decision, who, gate = self._gated(run, call)
            if decision is Decision.APPROVED:
                runnable.append(call)
            elif decision is Decision.PENDING and gate is not None:
                waiting.append(call.id)
                self._for.append(gate.waiting(run, call))
            elif gate is not None:
                text = error_text(gate.refusal(call.name, decision, who))
                refused = ToolOutcome(call=call, content=text, is_error=True, mutating=self._is_mutating(call))
                self._append(run, refused, counted=False)
        return runnable

    def _gated(self, run: Run, call: ToolCall) -> tuple[Decision, str | None, CallGate | None]:
        """The first gate that does not let the call through, and what it said (APPROVED, None: every one did)."""
        tool = self.tools.get(call.name)
        for gate in self.gates if tool is not None else ():
            if gate.asks(tool):  # type: ignore[arg-type]
                decision, who = gate.check(run, call)
                if decision is not Decision.APPROVED:
                    return decision, who, gate
        return Decision.APPROVED, None, None

    def _is_mutating(self, call: ToolCall) -> bool:
        tool = self.tools.get(call.name)
        return tool is not None and tool.mutating

    def _unknown(self, call: ToolCall) -> dict[str, bool]:
        """A call to a name the run has no tool for is marked: the name is the model's invention, which the run's
        metrics count as "other" (figures.py), never as a metric of its own."""
        return {} if self.tools.get(call.name) is not None else {"unknown": True}

    def _append(self, run: Run, outcome: ToolOutcome, *, counted: bool = True) -> ToolOutcome:
        outcome = self.hooks.on_tool_result(run, outcome)
        run.state.messages.append(msgs.tool_result(outcome.call.id, outcome.content))
        entry = {"turn": run.state.turn, "executed": counted, **outcome.to_record(), **self._unknown(outcome.call)}
        run.record.tool_calls.append(entry)
        run.state.tool_calls_used += int(counted)
        budget = run.context.budget
        if counted and budget is not None and budget.pending > 0:
            budget.pending -= 1
        return outcome


def tail_results(messages: list[msgs.Message]) -> int:
    """How many tool results follow the last assistant message."""
    count = 0
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        count += 1
    return count
