"""The ``subagent`` tool: a child run with its own window, context engine and budget; only its answer returns.

Isolation: the child's messages, tool calls and compactions live in its own state; the parent's window receives
one tool result (a virtual file when large, like any big result). Shared files are passed by reference through a
scoped store, and every read the child makes of them is recorded in the parent's ledger.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TextIO

from ..deadline import Deadline
from ..errors import RunError, ToolError
from ..events import AnswerTruncated, SubagentRan
from ..files import FileStore
from ..hooks import Hook
from ..record import RunStatus
from ..run_context import SUBAGENTS, Ledger, RunContext, SubagentSummary
from ..skills import SkillLibrary, SkillPolicy
from ..spend import Ledger as SpendLedger
from ..tools import Tool, tool
from ..workflows import Limits, ModelSettings, Workflow
from ..workflows.subagents import SubagentSettings
from .scoped_files import ScopedFileStore

if TYPE_CHECKING:
    from ..loop import Agent
    from ..models import ModelResponse
    from ..steps import Run

PROMPT = """\
You are a helper agent, started by another agent for one self-contained task. Work only on that task.
Your final answer is returned to the agent that started you as the result of its tool call: it cannot ask you
questions and it does not see your tool calls, so make the answer complete on its own. Cite file ids and line
numbers for the facts you report, keep identifiers exactly as written, and be as short as the task allows.
You cannot talk to the user."""


class SubagentBudgetError(RunError):
    """A child run used more tokens than its budget."""


class TokenBudget(Hook):
    """Stops a child run once its model calls have used ``limit`` tokens."""

    def __init__(self, limit: int) -> None:
        self.limit = limit

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        used = run.record.usage_totals()["total_tokens"]
        if used > self.limit:
            raise SubagentBudgetError(f"the helper used {used:,} tokens, over its budget of {self.limit:,}")


class LedgerBridge(Hook):
    """Records the child's reads of shared files in the parent's ledger (runs after the child's engine)."""

    def __init__(self, parent: Ledger | None, shared: list[str]) -> None:
        self.parent, self.shared = parent, set(shared)

    def on_run_start(self, run: Run) -> None:
        listeners = getattr(run.context.ledger, "listeners", None)
        if listeners is not None and self.parent is not None:
            listeners.append(self._forward)

    def _forward(
        self, file_id: str, *, tool: str, lines: tuple[int, int] | None, bytes_: tuple[int, int] | None
    ) -> None:
        if self.parent is not None and file_id in self.shared:
            self.parent.record_read(file_id, tool=f"subagent/{tool}", lines=lines, bytes_=bytes_)


class SpendBridge(Hook):
    """Links the child's spend ledger to the parent's: every call the child makes is charged to the parent's run
    as it happens, and the child's requests are checked against the parent's spend limit."""

    def __init__(self, parent: SpendLedger | None) -> None:
        self.parent = parent

    def on_run_start(self, run: Run) -> None:
        run.record.ledger.parent = self.parent


# The runtime's build_agent, one level deeper; the parent's context says what its run has found (toolsearch).
Spawn = Callable[[Workflow, FileStore, Sequence[Hook], RunContext], "Agent"]


def subagent_tool(
    parent: Workflow,
    *,
    spawn: Spawn,
    library: SkillLibrary | None,
    trace: TextIO | None = None,
) -> Tool:
    """``spawn`` builds a helper's agent (the runtime passes it: this module never imports the runtime)."""
    settings = parent.subagents
    models = dict(settings.models) or {parent.model.name: parent.model.context_window}
    default_model = parent.model.name if parent.model.name in models else next(iter(models))
    visible = parent.skills.visible(library.names()) if library else []

    def subagent(
        ctx: RunContext,
        task: str,
        files: list[str] | None = None,
        skills: list[str] | None = None,
        model: str | None = None,
    ) -> str:
        shared = [ctx.files.meta(file_id).id for file_id in files or []]  # unknown ids fail here, clearly
        granted = ctx.budget.reserve(settings.max_tool_calls) if ctx.budget else settings.max_tool_calls
        if granted <= 0:
            raise ToolError("no tool calls are left in this run's budget for a helper")
        spent = 0
        try:
            child = _child_workflow(parent, settings, models, model or default_model, skills or [], visible, granted)
            record = _run_child(ctx, child, shared, task, spawn, trace)
            spent = sum(1 for call in record.tool_calls if call.get("executed", True))
        finally:
            if ctx.budget is not None:  # the child's calls count against the parent's cap
                ctx.budget.settle(granted, spent)
        return _result(ctx, record, spent)

    subagent.__doc__ = _doc(models, default_model, visible, settings)
    return tool(subagent, name="subagent", maskable=False)  # a helper's answer is a conclusion: it stays


def _doc(models: dict[str, int], default: str, visible: list[str], settings: SubagentSettings) -> str:
    names = ", ".join(f"{name} ({window:,} tokens)" for name, window in models.items())
    return f"""Start a helper agent with its own context window for a self-contained task, and get back only its answer.

    Use it to summarize a large attachment, or to extract facts from files, without filling your own window:
    the helper reads the files you pass (by id) and returns its final answer. It cannot ask you questions, so
    put everything it needs in the task. It has at most {settings.max_tool_calls} tool calls and
    {settings.max_tokens:,} tokens.

    Args:
        task: The complete instructions for the helper, including what its answer should contain.
        files: Ids of the files (from the files list) the helper may read.
        skills: Skills to load for the helper{": " + ", ".join(visible) if visible else " (none available)"}.
        model: The helper's model: {names}. Default: {default}.
    """


def _child_workflow(
    parent: Workflow,
    settings: SubagentSettings,
    models: dict[str, int],
    model: str,
    skills: list[str],
    visible: list[str],
    calls: int,
) -> Workflow:
    if model not in models:
        raise ToolError(f"model {model!r} is not allowed for helpers; allowed: {', '.join(models)}")
    unknown = [name for name in skills if name not in visible]
    if unknown:
        raise ToolError(f"skills {unknown} are not available; available: {', '.join(visible) or 'none'}")
    window = models[model]
    return replace(
        parent,
        name=f"{parent.name}.subagent",
        description=f"helper of {parent.name}",
        prompt=PROMPT,
        model=ModelSettings(
            model,
            window,
            min(parent.model.max_output_tokens, window // 4),
            parent.model.tokenizer,
            prices=parent.model.prices if model == parent.model.name else None,
        ),
        limits=Limits(max_tool_calls=calls),
        skills=SkillPolicy(required=tuple(skills), allowed=tuple(skills)),
        coordinator="llm",  # a helper's model works on its task, whoever drives the parent (a script, a model)
        script=None,
        path=None,
        prompt_path=None,
    )


def _run_child(
    ctx: RunContext, child: Workflow, shared: list[str], task: str, spawn: Spawn, trace: TextIO | None
) -> Any:
    from ..trace import TraceHook

    hooks: list[Hook] = [LedgerBridge(ctx.ledger, shared), TokenBudget(child.subagents.max_tokens)]
    hooks.append(SpendBridge(ctx.spend))
    if trace is not None:
        hooks.append(TraceHook(trace, indent="    │ "))
    agent = spawn(child, ScopedFileStore(ctx.files, shared), hooks, ctx)
    limit = Deadline.after(child.subagents.max_seconds)
    deadline = limit if ctx.deadline.remaining() > limit.remaining() else ctx.deadline
    run_id = ctx.budget.child_id(ctx.run_id) if ctx.budget else f"{ctx.run_id}.sub{len(SUBAGENTS.get(ctx.state)) + 1}"
    return agent.run(task, deadline=deadline, run_id=run_id, stop=ctx.stop)  # a stop ends the helper too


def _result(ctx: RunContext, record: Any, executed: int) -> str:
    summary: SubagentSummary = {
        "run_id": record.run_id,
        "status": str(record.status),
        "tool_calls": executed,
        "tokens": record.usage_totals()["total_tokens"],
        "model": record.model,
    }
    SUBAGENTS.use(ctx.state).append(summary)
    if ctx.report is not None:  # into the parent's record: the child's record, and an event
        ctx.report(SubagentRan(**summary), child=record.to_dict())
    if record.status is RunStatus.TOOL_CALL_LIMIT and record.final_answer:
        return f"{record.final_answer}\n\n[the helper reached its tool-call limit: its answer may be incomplete]"
    if record.status is RunStatus.COST_LIMIT and record.final_answer:
        return f"{record.final_answer}\n\n[the helper stopped at the run's spend limit: its answer may be incomplete]"
    if record.status is not RunStatus.COMPLETED or record.final_answer is None:
        raise ToolError(f"the helper stopped ({record.status}): {record.stop_reason}")
    if any(event["type"] == AnswerTruncated.kind for event in record.events):  # its reason says which limit
        return f"{record.final_answer}\n\n[the helper's answer is incomplete: {record.stop_reason}]"
    return str(record.final_answer)
