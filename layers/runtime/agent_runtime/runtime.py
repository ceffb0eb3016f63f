"""Wiring shared by the CLI and the Lambda handlers: the model for a workflow, the default tools."""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any, TextIO

from . import telemetry, toolsearch
from .access import AccessHook
from .approvals import ApprovalGate
from .approvals.approvers import FixedApprover
from .approvals.gate import CallGate
from .config import RuntimeConfig
from .context import ContextEngine
from .coordinator import ScriptAgent
from .demo_model import open_demo_model
from .deployment import Services as Services  # here before deployment.py: their importers' name
from .deployment import deployed as deployed
from .errors import ConfigError, ToolError
from .files import FileStore
from .files.documents import DOCUMENT_TOOLS
from .files.preload import PreloadHook
from .files.tools import FILE_TOOLS
from .hooks import Hook
from .identity import Connections, gated
from .loop import Agent, RepeatedFailures
from .models import Model, OpenAIChatModel, RetryPolicy
from .run_context import RunContext
from .sandbox import LocalSandbox, SandboxClient, SandboxUnavailableError, open_sandbox, python_tool
from .skills import SkillLibrary, skill_content, skill_tools
from .skills.tools import skill_files
from .spend import HOW_TO_GO_ON, GoOn, Scope, SpendLimit
from .stores import PersistenceHook, RunStore, StoreSummaryMemo, ThreadStore
from .subagents.tool import subagent_tool
from .tools import Tool, ToolRegistry
from .toolsets import DeclaredTools, ToolEnv, ToolSettings, check_names, declared_tools
from .toolsets.python import script_function
from .trace import TraceHook
from .workflows import Workflow
from .workflows.schema import unpriced_limit


def default_tools(workflow: Workflow | None = None, skills: SkillLibrary | None = None) -> ToolRegistry:
    """The tools every workflow gets: the file tools, and the skill tools when the workflow may use skills."""
    registry = ToolRegistry([*FILE_TOOLS, *DOCUMENT_TOOLS])
    if workflow is not None and skills is not None:
        for item in skill_tools(skills, workflow.skills):
            registry.register(item)
    return registry


def workflow_line(workflow: Workflow, workflows_url: str | None, workflows_dir: Path | None) -> str:
    """``Workflow: NAME — prompt: LINK``: replies cite the prompt that drove them (see slack-formatting)."""
    source = workflow.prompt_path
    if source is None:
        return f"Workflow: {workflow.name}"
    try:
        relative = source.resolve().relative_to((workflows_dir or source.parent).resolve()).as_posix()
    except ValueError:
        relative = source.name
    link = f"{workflows_url}/{relative}" if workflows_url else f"workflows/{relative}"
    return f"Workflow: {workflow.name} — prompt: {link}"


def answer_footer(
    workflow: Workflow, workflows_url: str | None, workflows_dir: Path | None, *, chat: bool = False
) -> str:
    """The line an answer ends with, citing the workflow (its prompt is what drove the answer). A link only when
    it resolves (``AGENT_WORKFLOWS_URL`` set); in a chat reply Slack's ``<url|text>``, else Markdown; without a
    URL, a run from the command line names the workflow file where it is."""
    source = workflow.prompt_path or workflow.path
    relative = None
    if source is not None:
        try:
            relative = source.resolve().relative_to((workflows_dir or source.parent).resolve()).as_posix()
        except ValueError:
            relative = None
    label = f"{workflow.name} workflow"
    if workflows_url and relative:
        link = f"{workflows_url.rstrip('/')}/{relative}"
        return f"_Answered by the <{link}|{label}>_" if chat else f"_Answered by the [{label}]({link})_"
    if chat or workflow.path is None:
        return f"_Answered by the {label}_"
    return f"_Answered by the {label} ({workflow.path})_"


def prompt_sections(
    workflow: Workflow,
    skills: SkillLibrary | None,
    *,
    workflows_url: str | None = None,
    workflows_dir: Path | None = None,
) -> list[str]:
    """The workflow line, the skills catalog (tier 1) and the bodies of required skills, for the system prompt."""
    sections = [workflow_line(workflow, workflows_url, workflows_dir)]
    if skills is None:
        return sections
    visible = workflow.skills.visible(skills.names())
    if toolsearch.searched_skills(workflow, skills):  # too many to list: tool_search finds them
        sections.append(
            f"## Skills\n{len(visible)} skills are available: find the one a task needs with tool_search "
            "and load it with load_skill before doing what it describes."
        )
    elif visible:
        sections.append(
            "## Skills\nLoad a skill with load_skill before doing what it describes.\n" + skills.catalog(visible)
        )
    sections += [skill_content(skills, name) for name in workflow.skills.required]
    return sections


@contextmanager
def open_model(
    workflow: Workflow, config: RuntimeConfig, *, notice: TextIO | None = None, client: Any = None
) -> Iterator[Model]:
    """The workflow's model: the configured OpenAI-compatible endpoint, or the embedded demo model.

    The demo model is a real HTTP server on 127.0.0.1 reached through the real ``openai`` client. A long-lived
    process (the worker) passes one ``openai`` client for all runs: making one costs ~20 ms (TLS setup).
    """
    retry = RetryPolicy(max_attempts=config.model_max_attempts)
    name = config.model_override or workflow.model.name
    if not config.use_demo_model:
        yield OpenAIChatModel(name, client=client, retry=retry, timeout=config.model_timeout_seconds)
        return
    with open_demo_model(workflow.name, name, retry, notice) as model:
        yield model


@contextmanager
def workflow_sandbox(
    workflow: Workflow, config: RuntimeConfig, *, notice: TextIO | None = None
) -> Iterator[SandboxClient | None]:
    """The sandbox when the workflow uses one; a missing local install drops the python tool (said on
    ``notice``)."""
    if not workflow.sandbox.enabled:
        yield None
        return
    with open_sandbox(config) as sandbox:
        if isinstance(sandbox, LocalSandbox):
            try:
                sandbox.check()
            except SandboxUnavailableError as error:
                if notice is not None:
                    print(f"agent-runtime: warning: the python tool is not offered: {error}", file=notice)
                sandbox = None
        yield sandbox


def build_agent(
    workflow: Workflow,
    model: Model,
    services: Services | None = None,
    *,
    files: FileStore | None = None,
    hooks: Sequence[Hook] = (),
    tools: Sequence[Tool] = (),
) -> Agent:
    """An agent with the default tools, the tools its workflow declares, its skills, and the context engine
    first in the hook chain. ``tools`` adds your own ``@tool`` functions (as ``tools.python`` does from a
    workflow file); an eval's stubs among them replace the tools they name."""
    services = services or Services()
    registry, notes, search, gates = _registry(workflow, model, services, hooks, tools)
    chain = _chain(workflow, model, services, registry, [*search, *hooks])
    sections = [
        *prompt_sections(
            workflow,
            services.skills,
            workflows_url=services.config.workflows_url if services.config else None,
            workflows_dir=services.config.workflows_dir if services.config else None,
        ),
        *notes,
    ]
    gate = ApprovalGate(
        services.approver or FixedApprover(False, "nobody (no approver in this process)"),
        timeout_hours=workflow.tools.approval_timeout_hours,
        clock=services.clock,
    )
    spend = spend_limit(
        workflow,
        model,
        services.runs,
        services.thread_id,
        granted=services.granted,
        scopes=services.budgets,
        go_on=services.go_on,
    )
    agent: Callable[..., Agent] = partial(Agent, workflow, model)
    if workflow.coordinator == "script" and workflow.script:  # your function drives the run (coordinator/)
        path = (services.tool_env or ToolEnv.from_env()).tools_path
        agent = partial(ScriptAgent, workflow, model, function=script_function(workflow.script, path))
    return agent(
        tools=registry, files=files, hooks=chain, prompt_sections=sections, approvals=gate, spend=spend, gates=gates
    )


def _registry(
    workflow: Workflow, model: Model, services: Services, hooks: Sequence[Hook], tools: Sequence[Tool]
) -> tuple[ToolRegistry, list[str], list[Hook], list[CallGate]]:
    """The run's tools: the defaults, the declared ones (deferred when toolsearch says so; those acting as the
    requester bound to the run's connections), yours, python, subagent; stubs last, in place of their namesakes.
    And the notes declared sources add to the prompt, the tool search's hook when toolsets are deferred, and the
    gate calls acting as the requester wait at."""
    skills = services.skills
    registry = default_tools(workflow, skills)
    env = services.tool_env or ToolEnv.from_env()
    declared = declared_tools(workflow, env) if workflow.tools else DeclaredTools()
    guard = [AccessHook(services.access, frozenset(item.name for item in declared.tools))] if services.access else []
    declared = declared.only(services.access.offered() if services.access else None)  # the requester's (access.tools)
    declared.tools, connect = gated(declared.tools, services.identity or nobody(workflow))
    stubs = {item.name: item for item in tools if item.stub}  # an eval's stand-ins replace the tools they name
    own = [item for item in [*declared.tools, *tools] if item.name not in stubs]
    check_names(own, registry.names())
    stubbed = [item for item in declared.tools if item.name in stubs]  # deferred or not as they are: stubs take it
    for item in [*own, *stubbed]:
        registry.register(item)
    models = _model_factory(model)  # the chooser's: the workflow's model unless tools.search names another
    listed = toolsearch.searched_skills(workflow, skills)
    search = toolsearch.install(registry, workflow, declared.toolsets, lambda name: models(name or model.name), listed)
    if workflow.sandbox.enabled and services.sandbox is not None:
        reader = skill_files(skills, workflow.skills) if skills is not None else None
        registry.register(python_tool(services.sandbox, workflow.sandbox, reader))
    if workflow.subagents.enabled and services.depth < workflow.subagents.max_depth:
        parents = [registry.get(item.name) or item for item in own]  # as deferred as the parent's
        registry.register(_subagents(workflow, model, services, hooks, [*parents, *stubs.values()]))
    for stub in stubs.values():  # last: a stub stands in for any tool of its name, the runtime's own included
        registry.replace(stub)
    return registry, list(declared.notes), [*guard, *([search] if search else [])], [connect] if connect else []


def nobody(workflow: Workflow) -> Connections:
    """The connections of a process that acts for no one (an eval, a library call): tools acting as the requester
    refuse, saying so."""
    return Connections(None, workflow.oauth.providers, why_not="this process acts for nobody (no requester)")


def _subagents(
    workflow: Workflow, model: Model, services: Services, hooks: Sequence[Hook], parents: Sequence[Tool]
) -> Tool:
    """The subagent tool. Helpers use the parent's read-only declared and given tools (the same sessions and
    credentials). Not the others: a helper runs inside one tool call, with no checkpoint of its own (a resumed
    parent runs it again, so a mutating call could run twice) and no way to wait for an approval."""
    trace = next((hook.stream for hook in hooks if isinstance(hook, TraceHook)), None)
    model_for = _model_factory(model)
    helper_tools = [item for item in parents if not (item.mutating or item.needs_approval())]
    helper = Services(services.config, services.skills, sandbox=services.sandbox, depth=services.depth + 1)

    def spawn(child: Workflow, child_files: FileStore, child_hooks: Sequence[Hook], parent: RunContext) -> Agent:
        """A helper's agent: the same runtime one level deeper (the tool never imports this module), with the
        tools its parent has found so far in its tool list."""
        given = toolsearch.for_helper(helper_tools, parent.state)
        child = replace(child, tools=ToolSettings(search=workflow.tools.search))
        return build_agent(
            child, model_for(child.model.name), helper, files=child_files, hooks=child_hooks, tools=given
        )

    return subagent_tool(workflow, spawn=spawn, library=services.skills, trace=trace)


def _chain(
    workflow: Workflow, model: Model, services: Services, registry: ToolRegistry, hooks: Sequence[Hook]
) -> list[Hook]:
    """The hooks, in order: the context engine first, preloading, the refusal of a call that keeps failing (before
    the checkpoints: a refused mutating call is never journalled), checkpoints (every step is durable before
    anything else can fail), yours, and the trace when OpenTelemetry is on."""
    runs = services.runs
    engine = ContextEngine(workflow, registry, model=model, memo=StoreSummaryMemo(runs.store) if runs else None)
    searches = [hook for hook in hooks if isinstance(hook, toolsearch.ToolSearch)]
    engine.on_compacted += [hook.compacted for hook in searches]
    engine.compactor.briefs |= {toolsearch.SEARCH_TOOL: toolsearch.ToolSearch.brief} if searches else {}
    mutating = {t.name for t in registry if t.mutating}
    durable = [PersistenceHook(runs, mutating=mutating, thread_id=services.thread_id)] if runs else []
    preload = [PreloadHook(workflow.files)] if workflow.files.preload_kb or workflow.files.preload_images else []
    chain: list[Hook] = [engine, *preload, RepeatedFailures(), *durable, *hooks]
    if telemetry.enabled():  # OpenTelemetry is imported only when an OTLP endpoint is configured
        payloads = bool(services.config and services.config.log_payloads)
        chain.append(telemetry.TelemetryHook(parent=services.trace_parent, payloads=payloads))
    return chain


def spend_limit(
    workflow: Workflow,
    model: Model,
    runs: RunStore | None,
    thread_id: str | None,
    *,
    granted: float = 0.0,
    scopes: tuple[Scope, ...] = (),
    go_on: GoOn | None = None,
) -> SpendLimit | None:
    """The workflow's spend limits, with what the thread's other runs spent today (UTC) and what approvers added
    to it; ``granted`` (an approver's "continue with $N more" in this message) is this run's own limit. A limit
    on a model whose price is unknown is a configuration error (AGENT_MODEL or an eval's --model can change it).
    ``scopes``: the budgets per person, team and workflow the run starts under (access.budgets); ``go_on``: how a
    stop at the run's or the thread's limit says to go on, where the run was asked (None: the CLI's words)."""
    limits = workflow.limits
    if limits.max_cost is None and limits.max_cost_per_thread_day is None and not scopes:
        return None
    if (unpriced := unpriced_limit(replace(workflow.model, name=model.name), limits)) is not None:
        raise ConfigError(": ".join(unpriced))  # as validate says it (an eval's --model may name another model)

    def thread_spent(run_id: str) -> float:
        """Today's spend of the thread's other runs, less what approvers added to today's limit."""
        if runs is None or thread_id is None or limits.max_cost_per_thread_day is None:
            return 0.0
        today = time.strftime("%Y-%m-%d", time.gmtime())  # the rows come newest first: today's, however many
        rows = itertools.takewhile(lambda row: row.started_at[:10] >= today, runs.rows(thread_id=thread_id))
        spent = sum(row.cost_usd or 0.0 for row in rows if row.run_id != run_id and row.started_at[:10] == today)
        return spent - ThreadStore(runs.store).spend_raised(thread_id, today)

    grant = granted if granted > 0 else 0.0
    return SpendLimit(
        limits.max_cost, limits.max_cost_per_thread_day, thread_spent, grant, scopes, go_on or HOW_TO_GO_ON
    )


def _model_factory(model: Model) -> Callable[[str], Model]:
    """Models for sub-agents: the same endpoint with another model name."""

    def make(name: str) -> Model:
        if name == model.name:
            return model
        if isinstance(model, OpenAIChatModel):
            return model.with_name(name)
        raise ToolError(f"this runtime cannot switch {type(model).__name__} to model {name!r}")

    return make
