"""Tools disclosed progressively: attach whole toolsets, send the schemas a run uses.

``install`` decides which toolsets are deferred (``deferral.py``), and when any is, registers ``tool_search`` and
``call_tool`` and returns the hook that goes with them (``search.py``); the search is a lexical stage
(``index.py``) and, unless the workflow says ``chooser: lexical``, a model call in a window of its own
(``chooser.py``). ``for_helper`` gives a helper the tools its parent has found.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, MutableMapping, Sequence
from typing import Any

from ..context.counter import TokenCounter
from ..models import Model
from ..skills import SkillLibrary
from ..tools import Tool, ToolRegistry
from ..workflows import Workflow
from .chooser import Chooser
from .deferral import Deferral, apply, decide
from .index import Entry
from .search import CALL_TOOL, FOUND, SEARCH_TOOL, ToolSearch

__all__ = ["CALL_TOOL", "FOUND", "SEARCH_TOOL", "Deferral", "ToolSearch", "for_helper", "install", "searched_skills"]


def install(
    registry: ToolRegistry,
    workflow: Workflow,
    toolsets: Mapping[str, str],
    model_for: Callable[[str | None], Model],
    skills: Sequence[Entry] = (),
) -> ToolSearch | None:
    """Defer what the workflow's settings and the threshold say; the search's hook when anything is deferred or
    the skills are searched (``searched_skills``). ``model_for``: the chooser's model by name (None: the
    workflow's)."""
    counter = TokenCounter(workflow.model.name)
    apply(registry, decide(workflow, list(registry), toolsets, counter), toolsets)
    if not registry.deferred() and not skills:
        return None
    settings = workflow.tools.search
    chooser = Chooser(model_for(settings.chooser_model), settings.results) if settings.chooser == "model" else None
    search = ToolSearch(registry, settings, toolsets, chooser, skills)
    for item in search.tools():
        registry.register(item)
    return search


def searched_skills(workflow: Workflow, library: SkillLibrary | None) -> list[Entry]:
    """The skills the search finds instead of the prompt's catalogue: all the workflow may load on demand, when
    there are more than ``tools.search.skills_listed`` (none otherwise: the prompt lists them)."""
    if library is None:
        return []
    visible = [name for name in workflow.skills.visible(library.names()) if name not in workflow.skills.required]
    if len(visible) <= workflow.tools.search.skills_listed:
        return []
    return [Entry(name, library.get(name).description, kind="skill", group="skills") for name in visible]


def for_helper(tools: Sequence[Tool], parent_state: MutableMapping[str, Any]) -> list[Tool]:
    """A helper's tools: the parent's found tools in its tool list (its window has none of their schemas), the
    others deferred as they are in the parent's (the helper searches them itself)."""
    found = set(FOUND.get(parent_state))
    return [
        dataclasses.replace(item, deferred=False) if item.deferred and item.name in found else item for item in tools
    ]
