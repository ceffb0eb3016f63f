"""Stub tools: a case's canned answers in place of the workflow's tools, whatever their kind.

A stub replaces only what a tool returns. It takes the real tool's name, description, parameters, ``mutating`` and
approval rule from the workflow's declarations: a Python ``@tool``, a built-in, an operation of a local OpenAPI
document and the runtime's own tools are built offline for it (nothing is called); an MCP server's tool (or a
remote document's) keeps its source's rule, with the description, parameters and ``mutating`` the server would
list given by the stub (a tool the source's lists do not name counts as mutating, as a server's tool without a
read-only hint does). So a case asks, and ``approve`` decides, as ``--approve`` would in a real run. A stub that
names no tool of the workflow is a suite error (with the name meant), unless marked ``extra`` (a tool only the
case has). A source whose every allowed tool is stubbed is not connected at all: the suite runs offline.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from string import Template
from typing import Any, cast

from ..errors import ConfigError, ToolError
from ..skills import SkillLibrary
from ..tools import Tool
from ..tools.decorator import external_tool
from ..toolsets import ToolEnv
from ..workflows import Workflow
from ..workflows.tools import McpServerSettings, OpenApiSettings
from .cases import Stub, search
from .expect import argument_text

Source = McpServerSettings | OpenApiSettings


@dataclass(frozen=True)
class Known:
    """What a stub may stand in for: the workflow's tools built offline (by name, with their kind), the sources
    listed only when connected (MCP servers, remote OpenAPI documents), and the runtime's tools made in a run."""

    tools: Mapping[str, Tool] = field(default_factory=dict)
    kinds: Mapping[str, str] = field(default_factory=dict)
    sources: tuple[Source, ...] = ()
    made_in_run: frozenset[str] = frozenset()

    def names(self) -> list[str]:
        """Every name a stub may take (a source without a list of its tools: its prefix, for a hint)."""
        listed = [_listed(source) for source in self.sources]
        named = [_name(s.name, tool) for s, tools in zip(self.sources, listed, strict=True) for tool in tools or ()]
        return [*self.tools, *self.made_in_run, *named]


def known_tools(workflow: Workflow, env: ToolEnv | None = None, skills: SkillLibrary | None = None) -> Known:
    """The workflow's tools as a run declares them (its Python modules imported, local documents read): a
    ConfigError is the workflow's own (a module that does not import), said as the run would say it."""
    from ..runtime import default_tools

    settings, env = workflow.tools, env or ToolEnv.from_env()
    tools: dict[str, Tool] = {t.name: t for t in default_tools(workflow, skills)}
    kinds = dict.fromkeys(tools, "runtime")
    for kind, made, source in _declared(workflow, env):
        tools |= {t.name: dataclasses.replace(t, approval=settings.approval_for(t.name, source)) for t in made}
        kinds |= dict.fromkeys((t.name for t in made), kind)
    declared: list[Source] = [*settings.mcp, *settings.openapi]
    sources = tuple(s for s in declared if isinstance(s, McpServerSettings) or _remote(s))
    in_run = {"python"} if workflow.sandbox.enabled else set()
    return Known(tools, kinds, sources, frozenset(in_run | ({"subagent"} if workflow.subagents.enabled else set())))


def _declared(workflow: Workflow, env: ToolEnv) -> list[tuple[str, list[Tool], Source | None]]:
    """Python tools, built-ins and each local OpenAPI document's operations: their kind, and their source (for
    its approval rule)."""
    from ..toolsets.python import python_tools

    settings = workflow.tools
    found: list[tuple[str, list[Tool], Source | None]] = []
    if settings.python:
        found.append(("Python", python_tools(settings.python, env.tools_path), None))
    found.append(("built-in", [t for name in settings.builtin if (t := _builtin(name))], None))
    found += [("OpenAPI", _documented(workflow, api), api) for api in settings.openapi if not _remote(api)]
    return found


def _documented(workflow: Workflow, api: OpenApiSettings) -> list[Tool]:
    """The operations of a local document as tools (their client is never called: the base URL is a placeholder)."""
    from ..redaction import Redactor
    from ..toolsets.openapi import load_spec, openapi_tools

    spec = load_spec(api, workflow.path.parent if workflow.path else None)
    return openapi_tools(dataclasses.replace(api, base_url="https://127.0.0.1"), spec, {}, Redactor([]))


def _remote(api: OpenApiSettings) -> bool:
    return api.spec.startswith(("https://", "http://"))


def without_stubbed(workflow: Workflow, stubs: Sequence[Stub]) -> Workflow:
    """The workflow minus the declared tools its stubs replace (whole sources when all their tools are)."""
    names = {stub.name for stub in stubs}
    if not names:
        return workflow
    tools = workflow.tools
    return dataclasses.replace(
        workflow,
        tools=dataclasses.replace(
            tools,
            builtin=tuple(n for n in tools.builtin if n not in names),
            mcp=tuple(s for s in tools.mcp if not _covered(s.name, s.allow, names)),
            openapi=tuple(s for s in tools.openapi if not _covered(s.name, s.operations, names)),
        ),
    )


def _covered(source: str, allowed: tuple[str, ...] | None, names: set[str]) -> bool:
    """Every tool the source may offer (``<source>_<tool>``, as the model sees them) has a stub."""
    return bool(allowed) and all(_name(source, tool) in names for tool in allowed or ())


def _listed(source: Source) -> tuple[str, ...] | None:
    return source.allow if isinstance(source, McpServerSettings) else source.operations


def _name(source: str, tool: str) -> str:
    from ..toolsets.mcp import tool_name

    return tool_name(source, tool)


def source_of(sources: Sequence[Source], name: str) -> tuple[Source, str] | None:
    """The source that offers the tool named ``name`` (``<source>_<tool>``; the longest source name wins), and the
    tool's own name there."""
    for source in sorted(sources, key=lambda s: -len(s.name)):
        listed = _listed(source)
        if listed is not None:
            match = next((tool for tool in listed if _name(source.name, tool) == name), None)
        else:
            match = name.removeprefix(f"{source.name}_") if name.startswith(f"{source.name}_") else None
        if match:
            return source, match
    return None


def stub_tools(
    workflow: Workflow, stubs: Sequence[Stub], *, env: ToolEnv | None = None, skills: SkillLibrary | None = None
) -> list[Tool]:
    """The case's stubs as tools; a ConfigError for a stub that stands in for nothing (``stub_problems``)."""
    known = known_tools(workflow, env, skills)
    problems = stub_problems(workflow, stubs, known)
    if problems:
        name, why = next(iter(problems.items()))
        raise ConfigError(f"stubs.{name}: {why}")
    return [_stub_tool(workflow, stub, known) for stub in stubs]


def stub_problems(workflow: Workflow, stubs: Sequence[Stub], known: Known) -> dict[str, str]:
    """Each stub that stands in for no tool of the workflow (or gives what the real tool defines) → why."""
    problems: dict[str, str] = {}
    for stub in stubs:
        kind = known.kinds.get(stub.name)
        given = [key for key in ("description", "parameters", "mutating") if getattr(stub, key) is not None]
        if kind and stub.extra:
            problems[stub.name] = f"extra: the workflow has this tool ({kind}): a stub of it takes its definition"
        elif kind and given:
            problems[stub.name] = (
                f"{', '.join(given)}: a stub keeps the {kind} tool's own (the model sees what it sees in a run); "
                "remove it"
            )
        elif not (kind or stub.extra or stub.name in known.made_in_run or source_of(known.sources, stub.name)):
            problems[stub.name] = _unknown(stub.name, known)
    return problems


def _unknown(name: str, known: Known) -> str:
    names = known.names()
    meant = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
    hint = f"did you mean {meant[0]!r}?" if meant else f"its tools: {', '.join(sorted(names)[:15]) or 'none'}"
    return f"the workflow has no tool {name!r}; {hint} (a tool only this case has: extra: true)"


def _stub_tool(workflow: Workflow, stub: Stub, known: Known) -> Tool:
    """The real tool answering with the stub's rules; else a tool made from the stub (a source's, an extra)."""

    def call(arguments: dict[str, Any], ctx: Any) -> str:
        return answer(stub, arguments)

    real = None if stub.extra else known.tools.get(stub.name)
    if real is not None:
        return dataclasses.replace(real, fn=call, args_model=None, context_param=None, as_requester=None, stub=True)
    found = None if stub.extra else source_of(known.sources, stub.name)
    mutating = bool(stub.mutating) if found is None else _source_mutating(*found, stub.mutating)
    parameters = dict(stub.parameters or {"type": "object"})
    made = external_tool(stub.name, stub.description or f"The {stub.name} tool.", parameters, call, mutating=mutating)
    approval = workflow.tools.approval_for(stub.name, found[0] if found else None)
    return dataclasses.replace(made, approval="never" if stub.name in known.made_in_run else approval, stub=True)


def _source_mutating(source: Source, tool: str, said: bool | None) -> bool:
    """As the runtime decides for the source's tool: its lists first, then the server's hint (the stub's
    ``mutating``); without either, mutating (an MCP tool without a read-only hint is)."""
    if tool in source.mutating or tool in source.read_only:
        return tool in source.mutating
    return True if said is None else said


def answer(stub: Stub, arguments: Mapping[str, Any]) -> str:
    """The first rule whose ``when`` patterns all match; ``$argument`` in its text is replaced by the value."""
    for rule in stub.rules:
        if all(_when(pattern, argument_text(arguments.get(key))) for key, pattern in rule.when.items()):
            text = Template(rule.returns).safe_substitute({k: argument_text(v) for k, v in arguments.items()})
            if rule.error:
                raise ToolError(text)
            return text + (_filler(rule.pad_tokens, json.dumps(arguments, sort_keys=True)) if rule.pad_tokens else "")
    raise ToolError(f"no answer for these arguments ({json.dumps(arguments, ensure_ascii=False)[:300]})")


def _when(pattern: str, text: str) -> bool:
    try:
        return search(pattern, text)
    except TimeoutError as error:
        raise ToolError(f"the stub's pattern {pattern!r}: {error}") from None


def _filler(tokens: int, seed: str) -> str:
    """Deterministic prose of about ``tokens`` tokens, different per call (seeded by its arguments)."""
    from .generate import generate

    seeded = sum(ord(c) for c in seed)
    return "\n" + generate({"kind": "document", "tokens": tokens, "seed": seeded}).decode("utf-8")


def _builtin(name: str) -> Tool | None:
    """The built-in tool's own description and schema (its client is never called: the stub answers)."""
    from ..toolsets.builtin import builtin_tools

    absent = cast(Any, object())
    made = builtin_tools((name,), slack=absent, jira=absent, origin={})
    return made[0] if made else None
