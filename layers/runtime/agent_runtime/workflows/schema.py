"""The workflow definition (``workflows/<name>.yaml``) and its validation.

Every problem is collected, not just the first, so one edit fixes a file. Sections that later subsystems own
(``context``, ``files``, ``skills``, ``tools``, ``triggers``) must be mappings; their keys are checked there.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ..context.settings import ContextSettings, parse_context_section
from ..files.settings import FileSettings, parse_files_section
from ..sandbox.settings import SandboxSettings, parse_sandbox_section
from ..skills.policy import SkillPolicy, parse_skills_section
from ..subagents.settings import SubagentSettings, parse_subagents_section
from ..triggers.settings import TriggerSettings, parse_triggers_section
from .exceptions import Problem, WorkflowError

NAME_PATTERN = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SECTIONS = ("tools",)  # raw until its subsystem parses it
TOP_KEYS = ("name", "description", "prompt", "prompt_file", "model", "limits")
TOP_KEYS += ("context", "files", "skills", "subagents", "sandbox", "triggers", *SECTIONS)
MODEL_KEYS = ("name", "context_window", "max_output_tokens", "tokenizer")
TOKENIZERS = ("o200k_base", "cl100k_base")  # the encodings shipped with the package
LIMIT_KEYS = ("max_tool_calls",)
DEFAULT_MAX_OUTPUT_TOKENS = 4096
DEFAULT_MAX_TOOL_CALLS = 50


@dataclass(frozen=True, slots=True)
class ModelSettings:
    name: str
    context_window: int
    max_output_tokens: int = DEFAULT_MAX_OUTPUT_TOKENS
    tokenizer: str | None = None  # the encoding to count with; default: tiktoken's for the name, else o200k_base


@dataclass(frozen=True, slots=True)
class Limits:
    max_tool_calls: int = DEFAULT_MAX_TOOL_CALLS


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
    sections: Mapping[str, Mapping[str, Any]] = field(default_factory=lambda: MappingProxyType({}))
    path: Path | None = None
    prompt_path: Path | None = None  # the prompt file, or the workflow file for an inline prompt

    def section(self, key: str) -> Mapping[str, Any]:
        """A later subsystem's raw section (``context``, ``files``, ...), empty when absent."""
        return self.sections.get(key, MappingProxyType({}))


class _Checker:
    """Collects problems for one file."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.problems: list[Problem] = []

    def add(self, key: str, why: str) -> None:
        self.problems.append(Problem(self.file, key, why))

    def unknown_keys(self, data: Mapping[str, Any], allowed: tuple[str, ...], prefix: str) -> None:
        for key in data:
            if key not in allowed:
                close = difflib.get_close_matches(str(key), allowed, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; allowed: {', '.join(allowed)}"
                self.add(f"{prefix}{key}", f"unknown key{hint}")

    def text(self, data: Mapping[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
        value = data.get(key)
        if value is None:
            if required:
                self.add(where, "is required")
            return None
        if not isinstance(value, str) or not value.strip():
            self.add(where, "must be a non-empty string")
            return None
        return value

    def integer(self, data: Mapping[str, Any], key: str, where: str, *, default: int | None, minimum: int) -> int:
        value = data.get(key, default)
        if value is None:
            self.add(where, "is required")
            return minimum
        if isinstance(value, bool) or not isinstance(value, int):
            self.add(where, f"must be an integer, not {type(value).__name__} {value!r}")
            return minimum
        if value < minimum:
            self.add(where, f"must be at least {minimum}, got {value}")
        return value

    def mapping(self, data: Mapping[str, Any], key: str) -> Mapping[str, Any]:
        value = data.get(key)
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            self.add(key, f"must be a mapping, not {type(value).__name__}")
            return {}
        return value


def parse_workflow(
    data: Any, *, file: str, base_dir: Path | None = None, skill_names: Collection[str] | None = None
) -> Workflow:
    """Validate a parsed YAML document; raise :class:`WorkflowError` listing every problem.

    With ``skill_names``, skills the workflow names must exist in the library."""
    check = _Checker(file)
    if not isinstance(data, Mapping):
        raise WorkflowError([Problem(file, "(document)", "must be a mapping of keys to values")])
    check.unknown_keys(data, TOP_KEYS, "")
    name = check.text(data, "name", "name") or ""
    if name and not NAME_PATTERN.match(name):
        check.add("name", "use lowercase letters, digits and single hyphens (e.g. document-feedback)")
    description = check.text(data, "description", "description") or ""
    prompt = _prompt(check, data, base_dir)
    model = _model(check, check.mapping(data, "model"), "model" in data)
    limits_data = check.mapping(data, "limits")
    check.unknown_keys(limits_data, LIMIT_KEYS, "limits.")
    limits = Limits(
        max_tool_calls=check.integer(
            limits_data, "max_tool_calls", "limits.max_tool_calls", default=DEFAULT_MAX_TOOL_CALLS, minimum=0
        )
    )
    context = parse_context_section(check.mapping(data, "context"), check.add)
    skills = parse_skills_section(check.mapping(data, "skills"), check.add, skill_names)
    subagents = parse_subagents_section(check.mapping(data, "subagents"), check.add)
    files = parse_files_section(check.mapping(data, "files"), check.add)
    sandbox = parse_sandbox_section(check.mapping(data, "sandbox"), check.add)
    triggers = parse_triggers_section(check.mapping(data, "triggers"), check.add)
    sections = {key: MappingProxyType(dict(check.mapping(data, key))) for key in SECTIONS if key in data}
    if check.problems:
        raise WorkflowError(check.problems)
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
        MappingProxyType(sections),
        prompt_path=prompt_path,
    )


def _prompt(check: _Checker, data: Mapping[str, Any], base_dir: Path | None) -> str:
    if ("prompt" in data) == ("prompt_file" in data):
        check.add("prompt", "give exactly one of 'prompt' or 'prompt_file'")
        return ""
    if "prompt" in data:
        return check.text(data, "prompt", "prompt") or ""
    relative = check.text(data, "prompt_file", "prompt_file")
    if relative is None:
        return ""
    path = (base_dir or Path.cwd()) / relative
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        check.add("prompt_file", f"cannot read {path}: {error.strerror or error}")
        return ""
    if not text.strip():
        check.add("prompt_file", f"{path} is empty")
    return text


def _model(check: _Checker, data: Mapping[str, Any], present: bool) -> ModelSettings:
    if not present:
        check.add("model", "is required (model.name and model.context_window)")
        return ModelSettings("", 1)
    check.unknown_keys(data, MODEL_KEYS, "model.")
    name = check.text(data, "name", "model.name") or ""
    window = check.integer(data, "context_window", "model.context_window", default=None, minimum=1024)
    output = check.integer(
        data, "max_output_tokens", "model.max_output_tokens", default=DEFAULT_MAX_OUTPUT_TOKENS, minimum=1
    )
    if output >= window > 1:
        check.add("model.max_output_tokens", f"must be smaller than model.context_window ({window})")
    tokenizer = data.get("tokenizer")
    if tokenizer is not None and tokenizer not in TOKENIZERS:
        check.add("model.tokenizer", f"must be one of {', '.join(TOKENIZERS)}, not {tokenizer!r}")
        tokenizer = None
    return ModelSettings(name, window, output, tokenizer)
