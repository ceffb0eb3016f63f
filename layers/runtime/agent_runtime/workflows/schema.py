"""The workflow definition (``workflows/<name>.yaml``) and its validation.

Every problem is collected, not just the first, so one edit fixes a file. Sections that later subsystems own
(``context``, ``files``, ``skills``, ``tools``, ``triggers``) must be mappings; their keys are checked there.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..models.prices import Prices, prices_for
from ..sections import check_keys, choice, flag, integer, mapping, number, text
from .access import AccessSettings, parse_access_section
from .budgets import BUDGET_KEYS, Budgets, parse_budgets
from .context import ContextSettings, parse_context_section
from .exceptions import Problem, WorkflowError
from .files import FileSettings, parse_files_section
from .oauth import OAuthSettings, parse_oauth_section
from .sandbox import SandboxSettings, parse_sandbox_section
from .skills import SkillPolicy, parse_skills_section
from .subagents import SubagentSettings, parse_subagents_section
from .tools import ToolSettings, parse_tools_section
from .triggers import TriggerSettings, parse_triggers_section

NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
TOP_KEYS: tuple[str, ...] = ("name", "description", "prompt", "prompt_file", "model", "limits")
TOP_KEYS += (
    "context",
    "files",
    "skills",
    "subagents",
    "sandbox",
    "triggers",
    "tools",
    "report",
    "coordinator",
    "script",
    "access",
    "oauth",
)
COORDINATORS = ("llm", "script")  # the model drives the run, or your Python function does (coordinator/)
SCRIPT_REF = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")
MODEL_KEYS = ("name", "context_window", "max_output_tokens", "tokenizer", "prices")
PRICE_KEYS = ("input", "cached_input", "output")  # USD per million tokens
TOKENIZERS = ("o200k_base", "cl100k_base")  # the encodings shipped with the package
LIMIT_KEYS = ("max_tool_calls", "max_cost", "max_cost_per_thread_day", *BUDGET_KEYS)
DEFAULT_MAX_OUTPUT_TOKENS = 4096
DEFAULT_MAX_TOOL_CALLS = 50


@dataclass(frozen=True, slots=True)
class ModelSettings:
    name: str
    context_window: int
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    tokenizer: str | None = None  # the encoding to count with; default: tiktoken's for the name, else o200k_base
    prices: Prices | None = None  # for the run's cost estimate; default: the list price of the model's name


@dataclass(frozen=True, slots=True)
class ReportSettings:
    chart: bool = False  # attach the run's chart (how it used its window) to its Slack or JIRA answer


@dataclass(frozen=True, slots=True)
class Limits:
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS
    max_cost: float | None = None  # dollars per run (the price table's, or model.prices)
    max_cost_per_thread_day: float | None = None  # dollars per thread and UTC day, across its runs
    budgets: Budgets = field(default_factory=Budgets)  # per person, team and workflow, a UTC day and month


@dataclass(frozen=True, slots=True)
class Workflow:
    """A validated workflow. Build with :func:`parse_workflow` or the loader."""

    name: str
    description: str
    prompt: str
    model: ModelSettings
    limits: Limits = field(default_factory=Limits)
    context: ContextSettings = field(default_factory=ContextSettings)
    skills: SkillPolicy = field(default_factory=SkillPolicy)
    subagents: SubagentSettings = field(default_factory=SubagentSettings)
    files: FileSettings = field(default_factory=FileSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    triggers: TriggerSettings = field(default_factory=TriggerSettings)
    tools: ToolSettings = field(default_factory=ToolSettings)
    report: ReportSettings = field(default_factory=ReportSettings)
    path: Path | None = None
    prompt_path: Path | None = None  # the prompt file, or the workflow file for an inline prompt
    coordinator: str = "llm"
    script: str | None = None  # coordinator: script — module:function in the tools path
    access: AccessSettings = field(default_factory=AccessSettings)  # who may start, approve, reach which tools
    oauth: OAuthSettings = field(default_factory=OAuthSettings)  # providers its tools act through as the requester

    def with_model(self, name: str) -> Workflow:
        """The same workflow on another model (``AGENT_MODEL``, a deployment's choice): its helpers use that model
        too (the names under ``subagents.models`` are for another endpoint). ``model.prices`` stay: they are
        the prices of the model the workflow runs on, whichever that is (a self-hosted model's own rate). The
        window and output settings stay: the server's own window is learned."""
        if name == self.model.name:
            return self
        helpers = self.subagents
        if helpers.models:
            window = max(helpers.models.values())
            helpers = replace(helpers, models=MappingProxyType({name: window}))
        return replace(self, model=replace(self.model, name=name), subagents=helpers)


class _Checker:
    """Collects problems for one file; the checks themselves are the sections' own (``sections.py``)."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def add(self, key: str, why: str) -> None:
        self.problems.append(Problem(self.file, key, why))


def parse_workflow(
    data: Any, *, file: str, base_dir: Path | None = None, skill_names: Collection[str] | None = None
) -> Workflow:
    """Validate a parsed YAML document; raise :class:`WorkflowError` listing every problem.

    With ``skill_names``, skills the workflow names must exist in the library."""
    check = _Checker(file)
    if not isinstance(data, Mapping):
        raise WorkflowError([Problem(file, "(document)", "must be a mapping of keys to values")])
    check_keys("", data, TOP_KEYS, check.add)
    section = partial(mapping, "", data, report=check.add)
    name, description, prompt, model, limits = _head(check, data, section, base_dir)
    context, skills, subagents, files, sandbox, triggers, tools, report = _features(check, section, skill_names)
    coordinator = choice("", data, "coordinator", COORDINATORS, "llm", check.add) or "llm"
    script = _script(check, data, coordinator)
    access = parse_access_section(section("access"), check.add)
    if limits.budgets.team and not access.groups:
        check.add("limits", "a team's budget is an access group's: name the groups in access.groups")
    oauth = parse_oauth_section(section("oauth"), check.add)
    for where, provider in tools.providers().items():
        if provider not in oauth.providers:
            check.add(f"{where} as_requester", f"no provider {provider!r} in oauth.providers")
    if check.problems:
        tools_read = not any(p.key == "tools" or p.key.startswith(("tools.", "tools ")) for p in check.problems)
        raise WorkflowError(check.problems, tools if tools_read else None)
    prompt_path = (base_dir or Path.cwd()) / data["prompt_file"] if isinstance(data.get("prompt_file"), str) else None
    return Workflow(
        name,
        description,
        prompt,
        model,
        limits,
        context,
        skills,
        subagents,
        files,
        sandbox,
        triggers,
        tools,
        report,
        prompt_path=prompt_path,
        coordinator=coordinator,
        script=script,
        access=access,
        oauth=oauth,
    )


def _head(
    check: _Checker, data: Mapping[str, Any], section: Callable[[str], Mapping[str, Any]], base_dir: Path | None
) -> tuple[str, str, str, ModelSettings, Limits]:
    """The workflow's name, description, prompt, model and limits: Workflow's first fields, in their order."""
    name = text("", data, "name", check.add) or ""
    if name and not NAME_PATTERN.fullmatch(name):
        check.add("name", "use lowercase letters, digits and single hyphens (e.g. document-feedback)")
    description = text("", data, "description", check.add) or ""
    prompt = _prompt(check, data, base_dir)
    model = _model(check, section("model"), "model" in data)
    limits_data = section("limits")
    check_keys("limits", limits_data, LIMIT_KEYS, check.add)
    return name, description, prompt, model, _limits(check, limits_data, model)


Features = tuple[
    ContextSettings,
    SkillPolicy,
    SubagentSettings,
    FileSettings,
    SandboxSettings,
    TriggerSettings,
    ToolSettings,
    "ReportSettings",
]  # Workflow's fields after its head, in their order


def _features(
    check: _Checker, section: Callable[[str], Mapping[str, Any]], skill_names: Collection[str] | None
) -> Features:
    """Each feature's section, parsed by the feature's own settings module: Workflow's next fields, in their order."""
    report_data = section("report")
    check_keys("report", report_data, ("chart",), check.add)
    return (
        parse_context_section(section("context"), check.add),
        parse_skills_section(section("skills"), check.add, skill_names),
        parse_subagents_section(section("subagents"), check.add),
        parse_files_section(section("files"), check.add),
        parse_sandbox_section(section("sandbox"), check.add),
        parse_triggers_section(section("triggers"), check.add),
        parse_tools_section(section("tools"), check.add),
        ReportSettings(chart=flag("report", report_data, "chart", check.add)),
    )


def _script(check: _Checker, data: Mapping[str, Any], coordinator: str) -> str | None:
    script = data.get("script")
    if coordinator == "script" and not (isinstance(script, str) and SCRIPT_REF.fullmatch(script)):
        check.add("script", f"coordinator: script needs script: module:function (in the tools path); got {script!r}")
    elif coordinator != "script" and script is not None:
        check.add("script", "is the function of coordinator: script; set coordinator: script, or remove it")
    return script if isinstance(script, str) and coordinator == "script" else None


def _limits(check: _Checker, data: Mapping[str, Any], model: ModelSettings) -> Limits:
    def dollars(key: str) -> float | None:
        return number("limits", data, key, 0.0, check.add, low=0.0001, high=100_000) if key in data else None

    limits = Limits(
        integer("limits", data, "max_tool_calls", DEFAULT_MAX_TOOL_CALLS, check.add, low=0),
        dollars("max_cost"),
        dollars("max_cost_per_thread_day"),
        parse_budgets(data, dollars),
    )
    if (unpriced := unpriced_limit(model, limits)) is not None:
        check.add(*unpriced)
    return limits


def unpriced_limit(model: ModelSettings, limits: Limits, *, via: str = "") -> tuple[str, str] | None:
    """The first limit in dollars a model without a known price cannot hold, and why (key, why): the one decision
    of ``validate`` (the file's model, or ``AGENT_MODEL``'s: ``via`` says where the name came from) and ``run``,
    made before the run starts. None: no such limit, or the model is priced."""
    dollars = [("max_cost", limits.max_cost), ("max_cost_per_thread_day", limits.max_cost_per_thread_day)]
    named = [key for key, value in dollars if value is not None] + [budget.key for budget in limits.budgets.each]
    if not named or not model.name or prices_for(model.name, model.prices) is not None:
        return None
    return (
        f"limits.{named[0]}",
        f"model {model.name!r}{via} has no known price, so a limit in dollars cannot be held: set model.prices "
        "(USD per million tokens: input, cached_input, output; 0 for a self-hosted model) or remove the limit",
    )


def _prompt(check: _Checker, data: Mapping[str, Any], base_dir: Path | None) -> str:
    if ("prompt" in data) == ("prompt_file" in data):
        check.add("prompt", "give exactly one of 'prompt' or 'prompt_file'")
        return ""
    if "prompt" in data:
        return text("", data, "prompt", check.add) or ""
    relative = text("", data, "prompt_file", check.add)
    if relative is None:
        return ""
    path = (base_dir or Path.cwd()) / relative
    try:
        content = path.read_text(encoding="utf-8")
    except OSError as error:
        check.add("prompt_file", f"cannot read {path}: {error.strerror or error}")
        return ""
    if not content.strip():
        check.add("prompt_file", f"{path} is empty")
    return content


def _model(check: _Checker, data: Mapping[str, Any], present: bool) -> ModelSettings:
    if not present:
        check.add("model", "is required (model.name and model.context_window)")
        return ModelSettings("", 1)
    check_keys("model", data, MODEL_KEYS, check.add)
    name = text("model", data, "name", check.add) or ""
    window = integer("model", data, "context_window", None, check.add, low=1024)
    output = integer("model", data, "max_output_tokens", DEFAULT_MAX_OUTPUT_TOKENS, check.add)
    if output >= window == data.get("context_window"):  # compared only when the window itself is valid
        check.add("model.max_output_tokens", f"must be smaller than model.context_window ({window})")
    tokenizer = choice("model", data, "tokenizer", TOKENIZERS, None, check.add)
    return ModelSettings(name, window, output, tokenizer, _prices(check, data))


def _prices(check: _Checker, data: Mapping[str, Any]) -> Prices | None:
    if "prices" not in data:
        return None
    given = mapping("model", data, "prices", check.add)
    check_keys("model.prices", given, PRICE_KEYS, check.add)
    values = [number("model.prices", given, key, 0.0, check.add, low=0.0, high=1_000.0) for key in PRICE_KEYS]
    return Prices(*values)
