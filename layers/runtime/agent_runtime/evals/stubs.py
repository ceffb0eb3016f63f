"""Stub tools: a case's canned answers in place of the workflow's external tools (JIRA, Slack, MCP, OpenAPI).

A stub keeps the real tool's name, and for the built-ins its real description and schema, so the model sees the
same tool it sees in production; only the answer is the case's. It keeps its source's approval rule too: a stub of
an MCP or OpenAPI tool asks as that tool would (its source's ``approval``, and under ``mutating`` the source's
``mutating``/``read_only`` lists), so a case's ``approve`` decides it as ``--approve`` would in a real run. A source
whose every allowed tool is stubbed is not connected at all, so a suite runs offline and the same every time.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from string import Template
from typing import Any, cast

from ..errors import ToolError
from ..tools import Tool
from ..tools.decorator import external_tool
from ..workflows import Workflow
from ..workflows.tools import McpServerSettings, OpenApiSettings, ToolSettings
from .cases import Stub, argument_text, search


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
            approval_overrides={**_source_rules(tools, names), **tools.approval_overrides},
        ),
    )


def _source_rules(tools: ToolSettings, names: set[str]) -> dict[str, str]:
    """The approval mode each stubbed MCP or OpenAPI tool has from its source (kept when the source goes): its
    ``approval``, else the section's; under ``mutating``, the source's own lists say which of its tools mutate."""
    rules: dict[str, str] = {}
    for name in names - set(tools.builtin):
        found = _source_of(tools, name)
        if found is None:
            continue
        source, tool = found
        mode = source.approval or tools.approval
        if mode == "mutating" and tool in source.mutating:
            mode = "always"
        elif mode == "mutating" and tool in source.read_only:
            mode = "never"
        rules[name] = mode
    return rules


def _source_of(tools: ToolSettings, name: str) -> tuple[McpServerSettings | OpenApiSettings, str] | None:
    """The source that offers the tool named ``name`` (``<source>_<tool>``; the longest source name wins), and the
    tool's own name there."""
    from ..toolsets.mcp import tool_name

    sources: list[McpServerSettings | OpenApiSettings] = [*tools.mcp, *tools.openapi]
    for source in sorted(sources, key=lambda s: -len(s.name)):
        listed = source.allow if isinstance(source, McpServerSettings) else source.operations
        if listed is not None:
            match = next((tool for tool in listed if tool_name(source.name, tool) == name), None)
        else:
            match = name.removeprefix(f"{source.name}_") if name.startswith(f"{source.name}_") else None
        if match:
            return source, match
    return None


def _covered(source: str, allowed: tuple[str, ...] | None, names: set[str]) -> bool:
    """Every tool the source may offer (``<source>_<tool>``, as the model sees them) has a stub."""
    from ..toolsets.mcp import tool_name

    return bool(allowed) and all(tool_name(source, tool) in names for tool in allowed or ())


def stub_tools(workflow: Workflow, stubs: Sequence[Stub]) -> list[Tool]:
    return [_stub_tool(workflow, stub) for stub in stubs]


def _stub_tool(workflow: Workflow, stub: Stub) -> Tool:
    real = _builtin(stub.name)
    parameters = dict(stub.parameters or (real.parameters if real else {"type": "object"}))
    description = stub.description or (real.description if real else f"The {stub.name} tool.")

    def call(arguments: dict[str, Any], ctx: Any) -> str:
        return answer(stub, arguments)

    made = external_tool(stub.name, description, parameters, call, mutating=stub.mutating)
    return dataclasses.replace(made, approval=workflow.tools.approval_for(stub.name), stub=True)


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
