"""Stub tools: a case's canned answers in place of the workflow's external tools (JIRA, Slack, MCP, OpenAPI).

A stub keeps the real tool's name, and for the built-ins its real description and schema, so the model sees the
same tool it sees in production; only the answer is the case's. A source whose every allowed tool is stubbed is
not connected at all, so a suite runs offline and the same every time.
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
        ),
    )


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
