"""The agent loop: an explicit ``while`` over steps, each returning a small tagged result.

A step either calls the model (and then its tools) or finishes tool calls left pending by a suspended run.
The state after every step is consistent: no tool call without its result reaches the model.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from . import events as ev
from . import messages as msgs
from .approvals.gate import APPROVALS, ApprovalGate, Decision, refusal
from .deadline import Deadline
from .errors import ConfigError, RunError, ToolError
from .events import now_iso
from .files import FileMeta, FileStore, InMemoryFileStore
from .hooks import Hook, HookChain
from .models import ContextLengthExceededError, Model, ModelError, ModelRequest, ModelResponse, ToolCall
from .models.prices import prices_for
from .models.stream import Progress
from .record import RunRecord, RunState, RunStatus, new_run_id
from .run_context import SUBAGENTS, RunContext, ToolBudget
from .spend import COST_NOTE, GRANTED, Ledger, SpendLimit, estimate_usage, last_answer_cap, request_cap
from .state import Slot
from .tools import ToolOutcome, ToolRegistry, error_text
from .tools.registry import parse_arguments
from .workflows import Workflow

logger = logging.getLogger(__name__)
MAX_PARALLEL_TOOLS = 4
MAX_OVERFLOW_RETRIES = 3  # each retry follows a harder compaction; past this the server's window is not ours
# Turns in a row whose every call could not run (cut off, arguments not JSON): such calls do not count against
# the cap, so this bounds a model that keeps writing calls it cannot finish.
MAX_UNRUN_TURNS = 3
TRUNCATED = "the answer was cut off at the output limit (model.max_output_tokens)"
CUT_BY_WINDOW = (
    "the answer was cut off at the output limit of {cap:,} tokens: what the server's smaller window leaves for "
    "an answer (model.max_output_tokens is {configured:,})"
)
CUT_BY_SERVER = (
    "the answer was cut off by the server after {completion:,} tokens, below the output limit of {cap:,}: its "
    "context window was full ({total:,} tokens with the prompt) or it has an output limit of its own "
    "(llama.cpp's -n)"
)
CUT_OFF = (
    "not run: your reply was cut off at the output limit while writing tool calls; "
    "call again, with shorter arguments or fewer calls at once"
)
LIMIT_NOTE = (
    "The workflow's limit of {limit} tool calls (limits.max_tool_calls) is reached: no more tools can run. "
    "Answer now with what you have, and say briefly what is left undone."
)


class UnrunnableCallsError(RunError):
    """The model's tool calls could not run several turns in a row (cut off, or arguments that are not JSON)."""


# Consecutive turns none of whose calls could run (kept with the state: a resumed run goes on counting).
UNRUN_TURNS: Slot[int] = Slot("unrun_turns", int, owner=__name__)
# Every tool-call id issued in this run or thread (ids must never repeat: approvals and the journal key on them).
ISSUED: Slot[list[str]] = Slot("call_ids", list, owner=__name__)
MAX_ISSUED = 5_000


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


def system_prompt(workflow: Workflow, files: Sequence[FileMeta], sections: Sequence[str] = ()) -> str:
    """The workflow's prompt, extra sections (e.g. the skills catalog), and the run's files list (metadata
    only; contents come through tools)."""
    parts = [workflow.prompt.rstrip(), *(s.strip() for s in sections if s.strip())]
    if files:
        parts.append(_files_section(files))
    return "\n\n".join(parts)


def _files_section(files: Sequence[FileMeta]) -> str:
    rows = "\n".join(
        f"- {f.id}: {msgs.quoted(f.name)} ({msgs.quoted(f.mimetype, 80)}, {f.size_bytes:,} bytes, {f.source})"
        for f in files
    )
    return f"## Files\nRead them with the file tools, by id.\n{rows}"


class Agent:
    """Runs one workflow with one model, a tool registry and hooks."""

    def __init__(
        self,
        workflow: Workflow,
        model: Model,
        *,
        tools: ToolRegistry | None = None,
        hooks: Sequence[Hook] = (),
        files: FileStore | None = None,
        prompt_sections: Sequence[str] = (),
        approvals: ApprovalGate | None = None,
        spend: SpendLimit | None = None,
    ) -> None:
        self.workflow = workflow
        self.spend = spend if spend else None  # limits.max_cost / max_cost_per_thread_day
        self.approvals = approvals  # None: no call waits for a person (tools that need approval run)
        self.prompt_sections = list(prompt_sections)
        self.model = model
        self.tools = tools if tools is not None else ToolRegistry()
        self.hooks = HookChain(hooks)
        self.files = files if files is not None else InMemoryFileStore()

    def run(
        self,
        message: str | None = None,
        *,
        state: RunState | None = None,
        deadline: Deadline | None = None,
        run_id: str | None = None,
    ) -> RunRecord:
        """Run until a final answer, the tool-call cap, a failure, or the deadline (then the run suspends).

        Pass ``state`` to resume a suspended run or continue a thread; ``message`` then adds a user turn.
        """
        run = self._start(message, state, deadline or Deadline.none(), run_id)
        if self.spend is not None:  # the run's ledger carries its limit (its helpers' ledgers find it there)
            run.record.ledger.before_today = self.spend.thread_spent(run.state.run_id)
            run.record.ledger.limit = self._granted(run, self.spend)
        self.hooks.on_run_start(run)
        try:
            while True:
                result = self._step(run)
                self.hooks.after_step(run)
                if not isinstance(result, RanTools):
                    break
            if isinstance(result, Stopped) and result.status in (RunStatus.TOOL_CALL_LIMIT, RunStatus.COST_LIMIT):
                result = self._last_answer(run, result)
                self.hooks.after_step(run)
            self._finish(run, result)
        except RunError as error:
            run.record.status, run.record.stop_reason = RunStatus.FAILED, str(error)
            run.record.event(ev.Failed(error=type(error).__name__, status_code=getattr(error, "status_code", None)))
        except Exception as error:  # a bug or a hook's failure: the record says so instead of staying "running"
            logger.exception("error=<%s> | the run failed unexpectedly", type(error).__name__)
            run.record.status = RunStatus.FAILED
            run.record.stop_reason = f"internal error ({type(error).__name__}): {error}"
            run.record.event(ev.Failed(error=type(error).__name__))
        finally:
            run.record.ended_at = now_iso()
            self.hooks.on_run_end(run)
        return run.record

    def _start(self, message: str | None, state: RunState | None, deadline: Deadline, run_id: str | None) -> Run:
        files = self.files.list()
        new_files = [f for f in files if state is None or f.id not in state.announced_files]
        if state is None:
            state = RunState(run_id=run_id or new_run_id(), workflow=self.workflow.name)
            state.messages.append(msgs.system(system_prompt(self.workflow, files, self.prompt_sections)))
        elif message is not None and new_files:  # a thread goes on with new attachments: say so in the turn
            message = f"{message}\n\n{_files_section(new_files)}"
        state.announced_files.extend(f.id for f in new_files)
        if message is not None:
            state.messages.append(msgs.user(message))
        if len(state.messages) < 2 and not msgs.pending_tool_calls(state.messages):
            raise ConfigError("a run needs a user message (pass message=...)")
        # model.prices are the prices of the model the run uses (AGENT_MODEL, --model and helpers included).
        prices = prices_for(self.model.name, self.workflow.model.prices)
        record = RunRecord(state.run_id, self.workflow.name, self.model.name, state=state, prices=prices)
        record.ledger = Ledger(state.context)  # from what earlier invocations of this run spent
        record.files = [f.to_dict() for f in files]
        record.event(ev.RunStarted(resumed=state.turn > 0, turn=state.turn))
        context = RunContext(state.run_id, self.workflow.name, self.files, deadline, state=state.context)
        context.spend = record.ledger
        run = Run(self.workflow, state, record, context, deadline)
        context.report = lambda event, child=None: _report(record, event, child)
        context.budget = ToolBudget(
            self.workflow.limits.max_tool_calls,
            used=lambda: state.tool_calls_used,
            spend=lambda n: setattr(state, "tool_calls_used", state.tool_calls_used + n),
            children=len(SUBAGENTS.get(state.context)),
        )
        return run

    def _step(self, run: Run) -> StepResult:
        pending = msgs.pending_tool_calls(run.state.messages)
        if pending:  # a suspended run left calls unanswered: finish them before asking the model again
            return self._run_tools(run, [ToolCall.from_dict(call) for call in pending])
        last = run.state.messages[-1]
        if last["role"] == "assistant":  # resumed after its final answer was checkpointed: it is done
            return Final(msgs.text_of(last))
        if run.deadline.expired():
            return Suspended("the deadline was reached before the next model call")
        allowed = request_cap(run.record, run.state.messages, self.workflow.model.max_output_tokens)
        if isinstance(allowed, str):
            return Stopped(RunStatus.COST_LIMIT, f"Stopped: {allowed}.")
        run.state.turn += 1
        try:
            response = self._call_model(run, cap=allowed)
        except ModelError:
            if run.deadline.expired():  # cut off by our own deadline: nothing was appended, so suspend
                run.state.turn -= 1
                return Suspended("the deadline was reached during a model call")
            raise
        response = _unique_call_ids(response, run.state.turn, _issued(run.state))
        _remember_ids(run.state, response.tool_calls)
        stored, refused = _storable(response)
        run.state.messages.append(stored.to_message())
        if not response.tool_calls:
            cap, configured = run.output_cap, self.workflow.model.max_output_tokens
            cut = _cut_off(response, cap, configured) if response.finish_reason == "length" else None
            return Final(response.text or "", truncated=cut)
        result = self._run_tools(run, list(stored.tool_calls), refused)
        self._count_unrun(run, len(refused) == len(stored.tool_calls), refused)
        return result

    def _granted(self, run: Run, spend: SpendLimit) -> SpendLimit:
        """The run's grant: given now (kept in its state), or given before it suspended."""
        grant = spend.granted or GRANTED.get(run.state.context)
        if not grant:
            return spend
        GRANTED.set(run.state.context, grant)
        return replace(spend, per_run=grant, granted=grant)

    def _count_unrun(self, run: Run, none_ran: bool, refused: dict[str, str]) -> None:
        """Unrunnable calls are answered but not counted; a model that writes only those, turn after turn, is
        stopped here (its history stays valid: every call has its answer)."""
        count = UNRUN_TURNS.get(run.state.context) + 1 if none_ran else 0
        if count == 0:
            UNRUN_TURNS.clear(run.state.context)
            return
        UNRUN_TURNS.set(run.state.context, count)
        if count >= MAX_UNRUN_TURNS:
            why = next(iter(refused.values()), "")
            raise UnrunnableCallsError(
                f"the model's tool calls could not run {count} turns in a row (last: {why.split(';')[0]})"
            )

    def _call_model(self, run: Run, *, cap: int, note: str | None = None) -> ModelResponse:
        overflows, adapted = 0, False
        while True:
            messages = self.hooks.before_model_call(run, list(run.state.messages))
            run.output_cap = self.hooks.max_output_tokens(run, cap)
            request = ModelRequest(
                messages=messages if note is None else msgs.with_user_text(messages, note),
                tools=self.tools.specs(),
                max_output_tokens=run.output_cap,
                timeout=None if run.deadline.at is None else max(run.deadline.remaining(), 0.001),
                tool_choice=None if note is None else "none",
                on_progress=lambda progress: self.hooks.on_model_progress(run, self._named(progress)),
            )
            try:
                response = self.model.complete(request)
            except ContextLengthExceededError as error:
                run.record.attempts(run.state.turn, error.failures)
                run.record.event(ev.ContextOverflow(turn=run.state.turn, retried=overflows > 0))
                if overflows >= MAX_OVERFLOW_RETRIES or not self.hooks.on_context_overflow(run, error):
                    raise
                overflows += 1
                continue
            except ModelError as error:  # e.g. a chat template that refuses the request's shape: adapt once
                run.record.attempts(run.state.turn, error.failures)
                if adapted or not self.hooks.on_model_error(run, error):
                    raise
                adapted = True
                continue
            run.record.attempts(run.state.turn, response.failures)
            for change in response.adapted:
                run.record.event(ev.EndpointAdapted(change=change))
            estimate = partial(estimate_usage, request.messages, response.text, response.tool_calls,
                               self.model.name, self.workflow.model.tokenizer)  # fmt: skip
            run.record.add_call({"turn": run.state.turn, **response.to_record()}, estimate=estimate)
            self.hooks.after_model_call(run, response)
            return response

    def _named(self, progress: Progress) -> Progress:
        """Progress names only the tools the run has: a streamed name is the model's text until it is checked."""
        known = progress.writing in ("", "answer") or self.tools.get(progress.writing) is not None
        return progress if known else replace(progress, writing="an unknown tool")

    def _last_answer(self, run: Run, stopped: Stopped) -> Stopped:
        """At the tool-call cap the model gets one more request, with the tools offered but none callable (the
        prefix stays cacheable), told the limit is reached: its answer is the run's answer. The status still
        says the cap was reached."""
        if run.deadline.expired():
            return stopped
        cap = last_answer_cap(run.record, run.state.messages, self.workflow.model.max_output_tokens)
        if isinstance(cap, str):  # not even a last answer fits: the reason says what it needed
            return replace(stopped, reason=f"Stopped: {cap}.") if stopped.status is RunStatus.COST_LIMIT else stopped
        limit = run.record.ledger.root().limit
        if stopped.status is RunStatus.COST_LIMIT and limit is not None:
            note = COST_NOTE.format(limit=limit.label())
        else:
            note = LIMIT_NOTE.format(limit=self.workflow.limits.max_tool_calls)
        run.state.turn += 1
        try:
            response = self._call_model(run, cap=cap, note=note)
        except ModelError as error:
            run.record.event(ev.LastAnswerFailed(error=type(error).__name__))
            return stopped
        text = response.text or ""
        run.state.messages.append(msgs.assistant(text))  # any tool calls a server sent anyway are not run
        return Stopped(stopped.status, stopped.reason, answer=text or None)

    def _run_tools(self, run: Run, calls: list[ToolCall], broken: dict[str, str] | None = None) -> StepResult:
        limit = self.workflow.limits.max_tool_calls
        allowed = max(0, limit - run.state.tool_calls_used)
        runnable, refused = calls[:allowed], calls[allowed:]
        broken = broken or {}
        outcomes: list[ToolOutcome] = []
        waiting: list[str] = []
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
            return AwaitingApproval(tuple(waiting))
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
        index = len(run.state.messages) - 1 - _tail_results(run.state.messages)
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
            run.record.tool_calls.append({"turn": run.state.turn, "executed": False, "id": call.id,
                                          "name": call.name, "is_error": True, "refused": "limit"})  # fmt: skip

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
        """The calls of a batch that may run now: approved ones, and those that need no approval. A denied or
        expired call is answered with why; an undecided one waits (unanswered) and the run will say so."""
        if self.approvals is None:
            return batch
        runnable = []
        for call in batch:
            tool = self.tools.get(call.name)
            asked = tool is not None and tool.needs_approval()
            decision, who = self.approvals.check(run, call) if asked else (Decision.APPROVED, None)
            if decision is Decision.APPROVED:
                runnable.append(call)
            elif decision is Decision.PENDING:
                waiting.append(call.id)
            else:
                text = error_text(refusal(call.name, decision, who))
                refused = ToolOutcome(call=call, content=text, is_error=True, mutating=self._is_mutating(call))
                self._append(run, refused, counted=False)
        return runnable

    def _is_mutating(self, call: ToolCall) -> bool:
        tool = self.tools.get(call.name)
        return tool is not None and tool.mutating

    def _append(self, run: Run, outcome: ToolOutcome, *, counted: bool = True) -> ToolOutcome:
        outcome = self.hooks.on_tool_result(run, outcome)
        run.state.messages.append(msgs.tool_result(outcome.call.id, outcome.content))
        run.record.tool_calls.append({"turn": run.state.turn, "executed": counted, **outcome.to_record()})
        run.state.tool_calls_used += int(counted)
        budget = run.context.budget
        if counted and budget is not None and budget.pending > 0:
            budget.pending -= 1
        return outcome

    def _finish(self, run: Run, result: StepResult) -> None:
        record = run.record
        if isinstance(result, Final):
            record.status, record.final_answer = RunStatus.COMPLETED, result.answer
            if result.truncated:  # the reply says so; the record too
                record.stop_reason = result.truncated
                record.event(ev.AnswerTruncated(turn=run.state.turn))
            record.event(ev.Completed(turns=run.state.turn))
        elif isinstance(result, Suspended):
            record.status, record.stop_reason = RunStatus.SUSPENDED, result.reason
            record.event(ev.Suspended(reason=result.reason, turn=run.state.turn))
        elif isinstance(result, AwaitingApproval):
            names = ", ".join(sorted({c["function"]["name"] for c in msgs.pending_tool_calls(run.state.messages)}))
            record.status, record.stop_reason = RunStatus.AWAITING_APPROVAL, f"awaiting approval of {names}"
            record.event(ev.AwaitingApproval(calls=list(result.calls), turn=run.state.turn))
        elif isinstance(result, Stopped):
            record.status, record.stop_reason, record.final_answer = result.status, result.reason, result.answer
            if result.status is RunStatus.COST_LIMIT:
                record.event(ev.CostLimitReached(reason=result.reason, cost_usd=record.cost_usd()))
            else:
                record.event(ev.LimitReached(reason=result.reason, tool_calls=run.state.tool_calls_used))


def _report(record: RunRecord, event: ev.RunEvent, child: dict[str, Any] | None) -> None:
    """What a tool adds to the run's record (called from tool threads: list appends are atomic)."""
    if child is not None:
        record.children.append(child)
    record.event(event)


def _tail_results(messages: list[msgs.Message]) -> int:
    """How many tool results follow the last assistant message."""
    count = 0
    for message in reversed(messages):
        if message["role"] != "tool":
            break
        count += 1
    return count


def _cut_off(response: ModelResponse, cap: int | None, configured: int) -> str:
    """Which limit cut the answer short: the workflow's, the one a small server window leaves, or the server's
    own (fewer tokens than the cap allowed)."""
    usage = response.usage
    if usage is None or not cap or usage.completion_tokens >= cap * 0.9:
        if cap and cap < configured:
            return CUT_BY_WINDOW.format(cap=cap, configured=configured)
        return TRUNCATED
    total = usage.prompt_tokens + usage.completion_tokens
    return CUT_BY_SERVER.format(completion=usage.completion_tokens, cap=cap, total=total)


def _storable(response: ModelResponse) -> tuple[ModelResponse, dict[str, str]]:
    """The response as the history keeps it, and the calls that must not run, with why.

    A turn cut off at the output limit (finish_reason "length") ran out mid-call: none of its calls run. Arguments
    that are not JSON are stored as ``{}``: servers that rebuild the prompt from the history (llama.cpp) must
    parse them, and one broken string would fail every later request of the thread."""
    refused: dict[str, str] = {}
    calls = []
    for call in response.tool_calls:
        try:
            parse_arguments(call.arguments)
            valid = True
        except ToolError as error:
            valid, why = False, str(error)
        if response.finish_reason == "length":
            refused[call.id] = CUT_OFF
        elif not valid:
            refused[call.id] = f"{why} (it was not run)"
        calls.append(call if valid else replace(call, arguments="{}"))
    stored = replace(response, tool_calls=tuple(calls)) if calls != list(response.tool_calls) else response
    return stored, refused


def _issued(state: RunState) -> set[str]:
    """Every call id this run or thread has used: its history's, and those its approvals and journal keep after
    compaction has removed the calls (servers reuse ``call_1`` from one turn to the next)."""
    issued = set(ISSUED.get(state.context)) | set(APPROVALS.get(state.context))
    return issued | {call["id"] for message in state.messages for call in message.get("tool_calls", [])}


def _unique_call_ids(response: ModelResponse, turn: int, issued: set[str] | None = None) -> ModelResponse:
    """Call ids the model repeated, left empty or reused from an earlier turn are made unique before anything is
    stored: two calls with one id would leave one result orphaned, and an approval or a journal entry given to
    one call must never answer another."""
    seen: set[str] = set(issued or ())
    calls = []
    for index, call in enumerate(response.tool_calls):
        call_id, suffix = call.id or f"call_t{turn}_{index}", 1
        while call_id in seen:
            call_id, suffix = f"{call.id or 'call'}_{index}_{suffix}", suffix + 1
        seen.add(call_id)
        calls.append(call if call_id == call.id else replace(call, id=call_id))
    return response if calls == list(response.tool_calls) else replace(response, tool_calls=tuple(calls))


def _remember_ids(state: RunState, calls: Sequence[ToolCall]) -> None:
    if calls:
        issued = ISSUED.use(state.context)
        issued.extend(call.id for call in calls)
        del issued[:-MAX_ISSUED]  # bounded; approvals and journal entries still bind arguments and tool
