"""The search tool, the call-by-name tool, and the hook that makes a found tool's call the call of that tool.

The request's tool list stays fixed (the prompt cache keeps its prefix): ``tool_search`` returns the found tools'
schemas as its result (never masked; when a compaction takes it out of the window, its tools join the tool list,
the cache being lost there anyway), and the model calls one through ``call_tool`` — a
reply the runtime rewrites, before it is stored, into the call of the tool it names. From there on the call is
that tool's in every respect: its arguments checked against its schema, its approval, its read-only or mutating
mark, an eval's stub, the tool-call cap, the journal and the record. A search reaches only the tools the workflow
attached (the registry's deferred ones); found tools are kept in the run's state (checkpoints, resumes, threads)
and a helper started later gets them in its own tool list. The measurements behind these choices: docs/tools.md.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from .. import messages as msgs
from ..errors import ToolError
from ..events import ToolsFound
from ..hooks import Hook
from ..models import ModelResponse, ToolCall
from ..state import Slot
from ..steps import Run
from ..tools import Tool, ToolRegistry, tool
from ..workflows.toolsearch import SearchSettings
from .chooser import Chooser
from .index import Bm25, Entry

SEARCH_TOOL, CALL_TOOL = "tool_search", "call_tool"
# The deferred tools this run has found (their schemas are in its history), in the order found.
FOUND: Slot[list[str]] = Slot("found_tools", list, owner=__name__)
# Found tools whose search result a compaction took out of the window: sent in the tool list from then on.
LISTED: Slot[list[str]] = Slot("found_tools_listed", list, owner=__name__)


def entry_of(item: Tool, group: str = "") -> Entry:
    return Entry(item.name, item.description, tuple(item.parameters.get("properties", {})), group=group)


class ToolSearch(Hook):
    """One per agent: the catalogue of its deferred tools, and the two tools the model uses to reach them."""

    def __init__(
        self,
        registry: ToolRegistry,
        settings: SearchSettings,
        toolsets: Mapping[str, str],
        chooser: Chooser | None,
        skills: Sequence[Entry] = (),
    ) -> None:
        self.registry, self.settings, self.chooser = registry, settings, chooser
        tools = [entry_of(item, toolsets.get(item.name, "")) for item in registry.deferred()]
        self.catalogue = [*tools, *skills]  # a skill's entry: kind "skill", loaded with load_skill when found
        self.skills = {entry.name: entry for entry in skills}
        self.index = Bm25(self.catalogue)
        self.run: Run | None = None
        self._lock = threading.Lock()

    def tools(self) -> list[Tool]:
        def tool_search(need: str) -> str:
            return self.search(need)

        def call_tool(name: str, arguments: dict[str, Any] | None = None) -> str:
            raise ToolError(f"no tool named {name!r} is attached to this run; find tools with {SEARCH_TOOL}")

        tool_search.__doc__ = self._search_doc()
        call_tool.__doc__ = CALL_DOC
        # Found schemas stay in view: never offloaded to a file, never masked; a compaction that summarises a
        # search's result away puts its tools in the tool list instead (``compacted``).
        return [tool(tool_search, name=SEARCH_TOOL, maskable=False, offload=False), tool(call_tool, name=CALL_TOOL)]

    def _search_doc(self) -> str:
        groups: dict[str, int] = {}
        for item in self.catalogue:
            group = item.group or ("skills" if item.kind == "skill" else "other")
            groups[group] = groups.get(group, 0) + 1
        listing = ", ".join(f"{name} ({count})" for name, count in groups.items())
        return (
            f"Find tools you have not been given yet, and skills: {len(self.catalogue)} more are attached to this run "
            f"({listing}).\n\n"
            f"Describe what you need to do in plain words; you get the tools that fit, with their parameters. Call a "
            f"found tool with {CALL_TOOL}.\n\nArgs:\n    need: What you need a tool for, in your own words."
        )

    # The run
    def on_run_start(self, run: Run) -> None:
        self.run = run
        for name in LISTED.get(run.state.context):  # a resumed run's tool list is the one it had
            if (item := self.registry.get(name)) is not None and item.deferred:
                self.registry.reveal(name)

    def compacted(self, run: Run) -> None:
        """After a compaction (the engine calls it before measuring again): a found tool whose search result left
        the window joins the tool list. The prompt cache is lost from the compaction's first change anyway;
        the tool list comes first, so this costs the tools and the system prompt once, and the schema is then in
        the cached prefix rather than in the history every later compaction rewrites."""
        shown = "\n".join(msgs.text_of(m) for m in run.state.messages if m["role"] == "tool")
        listed = LISTED.use(run.state.context)
        for name in FOUND.get(run.state.context):
            item = self.registry.get(name)
            if item is not None and item.deferred and f"## {name}\n" not in shown:
                self.registry.reveal(name)
                listed.append(name)

    @staticmethod
    def brief(result: str) -> str:
        """A search's result as a compaction's summary call reads it: the tools it found, by name. Their schemas
        join the tool list once the result leaves the window (``compacted``); the summary needs only that they
        were found (the archive keeps the result whole)."""
        names = [line[3:].strip() for line in result.splitlines() if line.startswith("## ")]
        if not names:
            return result  # nothing found, or an error: short, and what the summary should say
        return f"Found: {', '.join(names)} (their schemas are in the tool list from now on)."

    def search(self, need: str) -> str:
        run = self.run
        hits = [entry for entry, _ in self.index.search(need, self.settings.candidates)]
        stage, tokens, names = "lexical", 0, [entry.name for entry in hits[: self.settings.results]]
        if self.chooser is not None and run is not None:
            choice = self.chooser.choose(run, need, hits, self.catalogue)
            stage, tokens = choice.stage, choice.tokens
            names = choice.names if choice.stage == "chooser" else names
        if run is None:
            return self.render(names, set())
        with self._lock:  # searches of one turn run in parallel
            found = FOUND.use(run.state.context)
            earlier = set(found)
            found.extend(name for name in names if name not in earlier)
        run.record.event(ToolsFound(found=names, candidates=len(hits), stage=stage, turn=run.state.turn, tokens=tokens))
        return self.render(names, earlier)

    def render(self, names: Sequence[str], earlier: set[str]) -> str:
        if not names:
            return "No attached tool fits that. Describe the need differently, or do without."
        parts = []
        for name in names:
            item = self.registry.get(name)
            if item is None or name in self.skills:
                skill = self.skills.get(name)
                parts += (
                    [f"## skill {name}\n{skill.description}\nLoad it with load_skill before doing what it says."]
                    if skill
                    else []
                )
                continue
            if name in earlier:
                where = "in your tool list" if not item.deferred else "its parameters are above"
                parts.append(f"## {name}\n(found earlier in this run: {where})")
                continue
            schema = json.dumps(item.parameters, ensure_ascii=False, separators=(",", ":"))
            parts.append(f"## {name}\n{item.description}\nParameters: {schema}")
        return "\n\n".join(parts) + f"\n\nCall with {CALL_TOOL}(name, arguments)."

    def shape_reply(self, run: Run, response: ModelResponse) -> ModelResponse:
        calls = tuple(self._through(run, call) for call in response.tool_calls)
        if all(new is old for new, old in zip(calls, response.tool_calls, strict=True)):
            return response
        return replace(response, tool_calls=calls)

    def _through(self, run: Run, call: ToolCall) -> ToolCall:
        """A ``call_tool`` call naming an attached tool, as that tool's call; any other call as it is (a call_tool
        call that names nothing attached runs call_tool, which says so)."""
        if call.name != CALL_TOOL:
            self._called(run, self.registry.get(call.name))  # a deferred tool called by its name directly
            return call
        try:
            outer = json.loads(call.arguments or "{}")
            name, inner = outer.get("name"), outer.get("arguments", {})
            inner = json.loads(inner) if isinstance(inner, str) else {} if inner is None else inner
        except (ValueError, AttributeError):
            return call
        target = self.registry.get(name) if isinstance(name, str) else None
        if target is None or name in (CALL_TOOL, SEARCH_TOOL) or not isinstance(inner, dict):
            return call
        self._called(run, target)
        return replace(call, name=name, arguments=json.dumps(inner, ensure_ascii=False))

    def _called(self, run: Run, target: Tool | None) -> None:
        """A deferred tool called without a search (its name guessed or remembered) is found all the same."""
        found = FOUND.use(run.state.context)
        if target is not None and target.deferred and target.name not in found:
            found.append(target.name)
            run.record.event(ToolsFound(found=[target.name], candidates=0, stage="called", turn=run.state.turn))


CALL_DOC = f"""Call a tool that {SEARCH_TOOL} found, by its name, with its arguments.

    Args:
        name: The found tool's name, as {SEARCH_TOOL} gave it.
        arguments: Its arguments, as its parameters say.
    """
