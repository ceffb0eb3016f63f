"""The agent loop: an explicit ``while`` over steps, each returning a small tagged result.

A step either calls the model (and then its tools) or finishes tool calls left pending by a suspended run.
The state after every step is consistent: no tool call without its result reaches the model.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from typing import Any

from .. import events as ev
from .. import messages as msgs
from ..approvals.gate import ApprovalGate, CallGate
from ..context.counter import estimate_usage
from ..deadline import Deadline
from ..errors import ConfigError, RunError
from ..events import now_iso
from ..files import FileStore, InMemoryFileStore
from ..hooks import Hook, HookChain
from ..models import ContextLengthExceededError, Model, ModelError, ModelRequest, ModelResponse, ToolCall
from ..models.prices import prices_for
from ..models.reasoning import visible
from ..models.stream import Progress
from ..record import RunRecord, RunState, RunStatus, new_run_id
from ..run_context import SUBAGENTS, RunContext, ToolBudget
from ..spend import COST_NOTE, GRANTED, Ledger, SpendLimit, last_answer_cap, request_cap
from ..steps import AwaitingApproval, Final, RanTools, Run, StepResult, Stopped, Suspended
from ..stopping import StopRequest, answer_pending, asked_now, never
from ..tools import ToolRegistry
from ..workflows import Workflow
from ._files import met_files
from ._tool_calls import ToolCalls
from ._turns import (
    CUT_BY_SERVER,
    CUT_BY_WINDOW,
    TRUNCATED,
    UnrunnableCallsError,
    count_unrun,
    cut_off,
    issued,
    remember_ids,
    storable,
    unique_call_ids,
)

__all__ = [
    "CUT_BY_SERVER",
    "CUT_BY_WINDOW",
    "TRUNCATED",
    "Agent",
    "AwaitingApproval",
    "Final",
    "RanTools",
    "Run",
    "StepResult",
    "Stopped",
    "Suspended",
    "UnrunnableCallsError",
]
logger = logging.getLogger(__name__)
MAX_OVERFLOW_RETRIES = 3  # each retry follows a harder compaction; past this the server's window is not ours
LIMIT_NOTE = (
    "The workflow's limit of {limit} tool calls (limits.max_tool_calls) is reached: no more tools can run. "
    "Answer now with what you have, and say briefly what is left undone."
)


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
        gates: Sequence[CallGate] = (),
    ) -> None:
        self.workflow = workflow
        self.spend = spend if spend else None  # limits.max_cost / max_cost_per_thread_day
        self.approvals = approvals  # None: no call waits for a person (tools that need approval run)
        self.prompt_sections = list(prompt_sections)
        self.model = model
        self.tools = tools if tools is not None else ToolRegistry()
        self.hooks = HookChain(hooks)
        self.calls = ToolCalls(self.tools, self.hooks, approvals, gates)  # a turn's calls: run, refused or waiting
        self.files = files if files is not None else InMemoryFileStore()

    def run(
        self,
        message: str | None = None,
        *,
        state: RunState | None = None,
        deadline: Deadline | None = None,
        run_id: str | None = None,
        stop: Callable[[], StopRequest | None] | None = None,
    ) -> RunRecord:
        """Run until a final answer, the tool-call cap, a failure, a stop, or the deadline (then it suspends).

        Pass ``state`` to resume a suspended run or continue a thread; ``message`` then adds a user turn.
        ``stop`` says whether someone asked the run to stop (``stopping.StopCheck``): asked before each model
        call and while one streams.
        """
        run = self._start(message, state, deadline or Deadline.none(), run_id)
        run.context.stop = stop or never
        if self.spend is not None:  # the run's ledger carries its limit (its helpers' ledgers find it there)
            run.record.ledger.before_today = self.spend.thread_spent(run.state.run_id)
            run.record.ledger.limit = self._granted(run, self.spend)
        self.hooks.on_run_start(run)
        try:
            self._finish(run, self._drive(run))
        except RunError as error:
            run.record.status, run.record.stop_reason = RunStatus.FAILED, str(error)
            run.record.event(ev.Failed(error=type(error).__name__, status_code=getattr(error, "status_code", None)))
        except Exception as error:  # a bug or a hook's failure: the record says so instead of staying "running"
            logger.exception("error=<%s> | the run failed unexpectedly", type(error).__name__)
            run.record.status = RunStatus.FAILED
            run.record.stop_reason = f"internal error ({type(error).__name__}): {error}"
            run.record.event(ev.Failed(error=type(error).__name__))
        finally:
            met_files(run.state, self.files)
            run.record.ended_at = now_iso()
            run.record.ledger.release()  # a request planned but never sent holds nothing past the run
            self.hooks.on_run_end(run)
        return run.record

    def _drive(self, run: Run) -> StepResult:
        """The run's steps until one ends it: model calls and their tools (a code coordinator drives otherwise)."""
        while True:
            result = self._step(run)
            self.hooks.after_step(run)
            if not isinstance(result, RanTools):
                break
        if isinstance(result, Stopped) and result.status in (RunStatus.TOOL_CALL_LIMIT, RunStatus.COST_LIMIT):
            result = self._last_answer(run, result)
            self.hooks.after_step(run)
        return result

    def _start(self, message: str | None, state: RunState | None, deadline: Deadline, run_id: str | None) -> Run:
        files = self.files.list()
        new_files = [f for f in files if state is None or f.id not in state.announced_files]
        if state is None:
            state = RunState(run_id=run_id or new_run_id(), workflow=self.workflow.name)
            state.messages.append(msgs.system(msgs.system_prompt(self.workflow, files, self.prompt_sections)))
        elif message is not None and new_files:  # a thread goes on with new attachments: say so in the turn
            message = f"{message}\n\n{msgs.files_section(new_files)}"
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
        if (asked := asked_now(run.context.stop)) is not None:
            return stopped(run, asked)
        pending = msgs.pending_tool_calls(run.state.messages)
        if pending:  # a suspended run left calls unanswered: finish them before asking the model again
            return self.calls.run(run, [ToolCall.from_dict(call) for call in pending])
        last = run.state.messages[-1]
        if last["role"] == "assistant":  # resumed after its final answer was checkpointed: it is done
            return Final(visible(msgs.text_of(last)))
        if run.deadline.expired():
            return Suspended("the deadline was reached before the next model call")
        allowed = request_cap(run.record, run.state.messages, self.workflow.model.max_output_tokens)
        if isinstance(allowed, str):
            return Stopped(RunStatus.COST_LIMIT, f"Stopped: {allowed}.")
        run.state.turn += 1
        try:
            response = self._call_model(run, cap=allowed)
        except ModelError:
            if (asked := run.context.stop()) is not None:  # the call was closed for a stop: nothing appended
                return stopped(run, asked)
            if run.deadline.expired():  # cut off by our own deadline: nothing was appended, so suspend
                run.state.turn -= 1
                return Suspended("the deadline was reached during a model call")
            raise
        response = unique_call_ids(self.hooks.shape_reply(run, response), run.state.turn, issued(run.state))
        remember_ids(run.state, response.tool_calls)
        stored, refused = storable(response)
        run.state.messages.append(stored.to_message())
        if not response.tool_calls:
            cap, configured = run.output_cap, self.workflow.model.max_output_tokens
            cut = cut_off(response, cap, configured, allowed) if response.finish_reason == "length" else None
            return Final(visible(response.text or ""), truncated=cut)  # its reasoning stays in the history
        result = self.calls.run(run, list(stored.tool_calls), refused)
        count_unrun(run, len(refused) == len(stored.tool_calls), refused)
        return result

    def _granted(self, run: Run, spend: SpendLimit) -> SpendLimit:
        """The run's grant: given now (kept in its state), or given before it suspended."""
        grant = spend.granted or GRANTED.get(run.state.context)
        if not grant:
            return spend
        GRANTED.set(run.state.context, grant)
        return replace(spend, per_run=grant, granted=grant)

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
                cancelled=lambda: run.context.stop() is not None,
            )
            try:
                response = self.complete(run, request)
            except ContextLengthExceededError as error:
                run.record.event(ev.ContextOverflow(turn=run.state.turn, retried=overflows > 0))
                if overflows >= MAX_OVERFLOW_RETRIES or not self.hooks.on_context_overflow(run, error):
                    raise
                overflows += 1
                continue
            except ModelError as error:  # e.g. a chat template that refuses the request's shape: adapt once
                if adapted or not self.hooks.on_model_error(run, error):
                    raise
                adapted = True
                continue
            self.hooks.after_model_call(run, response)
            return response

    def complete(self, run: Run, request: ModelRequest, **extra: Any) -> ModelResponse:
        """One model call, priced in the run's ledger as it is recorded: its failed attempts, its endpoint's
        adaptations, the call. A call without usage is charged an estimate of the request as it went (its messages
        and its tools' schemas), counted as the engine counts: an attempt cut short its prompt (and what arrived),
        an answer its prompt and reply. Once charged, what the spend limit held for the request goes."""
        count = partial(
            estimate_usage,
            request.messages,
            model=self.model.name,
            tokenizer=self.workflow.model.tokenizer,
            tools=request.tools,
        )
        prompt = partial(count, "", ())
        try:
            try:
                response = self.model.complete(request)
            except ModelError as error:
                run.record.attempts(run.state.turn, error.failures, estimate=prompt)
                raise
            run.record.attempts(run.state.turn, response.failures, estimate=prompt)
            for change in response.adapted:
                run.record.event(ev.EndpointAdapted(change=change))
            estimate = partial(count, response.text, response.tool_calls)
            run.record.add_call({"turn": run.state.turn, **extra, **response.to_record()}, estimate=estimate)
        finally:
            run.record.ledger.release()
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
            record.status = RunStatus.AWAITING_APPROVAL
            record.stop_reason = result.reason or f"awaiting approval of {names}"
            record.event(ev.AwaitingApproval(calls=list(result.calls), turn=run.state.turn))
        elif isinstance(result, Stopped):
            record.status, record.stop_reason, record.final_answer = result.status, result.reason, result.answer
            if result.status is RunStatus.COST_LIMIT:
                record.event(ev.CostLimitReached(reason=result.reason, cost_usd=record.cost_usd()))
            elif result.status is RunStatus.STOPPED:
                asked = run.context.stop() or StopRequest("someone", 0.0, "")
                record.event(ev.Stopped(by=asked.by, via=asked.via, turn=run.state.turn))
            else:
                record.event(ev.LimitReached(reason=result.reason, tool_calls=run.state.tool_calls_used))


def stopped(run: Run, asked: StopRequest) -> Stopped:
    answer_pending(run.state.messages, asked)
    return Stopped(RunStatus.STOPPED, asked.reason())


def _report(record: RunRecord, event: ev.RunEvent, child: dict[str, Any] | None) -> None:
    """What a tool adds to the run's record (called from tool threads: list appends are atomic)."""
    if child is not None:
        record.children.append(child)
    record.event(event)
