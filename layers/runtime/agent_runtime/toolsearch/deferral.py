"""Which toolsets are deferred: their schemas stay out of the request until a search finds their tools.

A toolset on ``always`` is deferred, on ``never`` sent; those on ``auto`` (the default) are all deferred when the
declared tools' schemas would pass the threshold (``tools.search.threshold_tokens``, by default 5 % of the window
the workflow uses and at least 1,000 tokens), and all sent when they would not. All, not the largest first: once
the model searches anyway, a small toolset kept in view costs its schemas in every request to save one search (a
parallel call in a turn the model makes anyway) — measured in docs/tools.md. A toolset of more tools than an MCP
server may send without ``allow:`` is deferred whatever the rest weighs.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..context.counter import TokenCounter
from ..tools import Tool, ToolRegistry
from ..workflows import Workflow
from ..workflows.toolsearch import MAX_TOOLS_WITHOUT_ALLOW

THRESHOLD_SHARE = 0.05  # of the window, when the workflow sets no threshold_tokens
MIN_THRESHOLD = 1_000  # tokens: deferring less saves little more than tool_search and call_tool cost (~400)


@dataclass(frozen=True, slots=True)
class Deferral:
    """What was decided, with its numbers (for ``workflows validate`` and the docs' figures)."""

    deferred: tuple[str, ...]  # toolsets
    threshold: int  # tokens
    sent_tokens: int  # the declared tools' schemas still sent after the decision
    deferred_tokens: int  # what the deferred schemas would have cost every request


def threshold(workflow: Workflow) -> int:
    settings = workflow.tools.search
    if settings.threshold_tokens is not None:
        return settings.threshold_tokens
    window = min(workflow.model.context_window, workflow.context.context_budget or math.inf)
    return max(MIN_THRESHOLD, int(window * THRESHOLD_SHARE))


def decide(workflow: Workflow, tools: list[Tool], toolsets: Mapping[str, str], counter: TokenCounter) -> Deferral:
    """The toolsets to defer among ``tools`` (``toolsets``: tool name → toolset; tools of none always stay)."""
    settings = workflow.tools.search
    members: dict[str, list[Tool]] = {}
    for item in tools:
        if item.name in toolsets and not item.deferred:
            members.setdefault(toolsets[item.name], []).append(item)
    cost = {name: counter.tools([t.spec() for t in group]) for name, group in members.items()}
    deferred = [name for name in members if settings.mode(name) == "always"]
    deferred += [
        name
        for name, group in members.items()
        if settings.mode(name) == "auto" and len(group) > MAX_TOOLS_WITHOUT_ALLOW
    ]
    limit = threshold(workflow)  # against the declared tools' schemas: the runtime's own are sent whatever they weigh
    sent = counter.tools([t.spec() for name, group in members.items() if name not in deferred for t in group])
    if sent > limit:
        autos = [name for name in members if settings.mode(name) == "auto" and name not in deferred]
        deferred += autos
        sent -= sum(cost[name] for name in autos)
    return Deferral(tuple(deferred), limit, max(0, sent), sum(cost[name] for name in deferred))


def apply(registry: ToolRegistry, deferral: Deferral, toolsets: Mapping[str, str]) -> None:
    for item in list(registry):
        if toolsets.get(item.name) in deferral.deferred and not item.deferred:
            registry.replace(dataclasses.replace(item, deferred=True))
