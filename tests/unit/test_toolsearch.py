"""The tool search's promises, across their inputs: a search reaches only attached tools; a call_tool reply
becomes the named attached tool's call or stays as it was; the chooser's answer yields catalogue names only; the
deferral keeps small toolsets in view and never sends more than the threshold while an auto toolset is left."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from agent_runtime.context.counter import TokenCounter
from agent_runtime.models import ModelResponse, ToolCall
from agent_runtime.tools import ToolRegistry
from agent_runtime.tools.decorator import external_tool
from agent_runtime.toolsearch.chooser import picked
from agent_runtime.toolsearch.deferral import decide
from agent_runtime.toolsearch.index import Bm25, Entry, words
from agent_runtime.toolsearch.search import CALL_TOOL, ToolSearch
from agent_runtime.workflows.toolsearch import SearchSettings
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make_workflow

NAMES = ["github_list_commits", "gitlab_list_commits", "playwright_browser_take_screenshot", "brave_web_search"]


def made(name: str, description: str = "does things", **properties: Any) -> Any:
    return external_tool(name, description, {"properties": properties}, lambda arguments, ctx: "ok")


def catalogue() -> ToolRegistry:
    registry = ToolRegistry([made("file_read")])
    for name in NAMES:
        registry.register(replace(made(name, f"{name.replace('_', ' ')} of a project", repo={"type": "string"}),
                                  deferred=True))  # fmt: skip
    return registry


class FakeRun:
    def __init__(self) -> None:
        from agent_runtime.record import RunRecord, RunState

        self.state = RunState(run_id="r", workflow="w")
        self.record = RunRecord("r", "w", "m", state=self.state)


def test_words_split_names_and_stem() -> None:
    assert words("listCommits of github_pull_requests") == ["list", "commit", "github", "pull", "request"]


def test_bm25_ranks_the_tool_whose_words_the_need_shares() -> None:
    index = Bm25([Entry(name, name.replace("_", " ")) for name in NAMES])
    assert next(e.name for e, _ in index.search("take a screenshot of the page", 3)) == NAMES[2]
    assert index.search("zzz qqq", 3) == []


@settings(max_examples=60, deadline=None)
@given(reply=st.text(max_size=300), extra=st.lists(st.sampled_from([*NAMES, "nope_tool", "file_read"]), max_size=6))
def test_the_chooser_answer_yields_catalogue_names_only(reply: str, extra: list[str]) -> None:
    text = reply + "\n" + "\n".join(extra)
    names = picked(text, NAMES)
    assert set(names) <= set(NAMES) and len(names) == len(set(names))
    assert {name for name in extra if name in NAMES} <= set(names)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)  # fmt: skip


@settings(max_examples=80, deadline=None)
@given(name=st.sampled_from([*NAMES, "file_read", "tool_search", CALL_TOOL, "nope", ""]) | JSON, arguments=JSON,
       raw=st.booleans())  # fmt: skip
def test_a_call_tool_reply_becomes_an_attached_tools_call_or_stays(name: Any, arguments: Any, raw: bool) -> None:
    registry = catalogue()
    search = ToolSearch(registry, SearchSettings(chooser="lexical"), {}, None)
    for item in search.tools():
        registry.register(item)
    body = {"name": name, "arguments": json.dumps(arguments) if raw else arguments}
    original = ToolCall("c1", CALL_TOOL, json.dumps(body))
    run: Any = FakeRun()
    [shaped] = search.shape_reply(run, ModelResponse(text=None, tool_calls=(original,))).tool_calls
    if shaped is original:
        return
    assert shaped.id == "c1" and shaped.name == name and registry.get(shaped.name) is not None
    assert shaped.name not in ("tool_search", CALL_TOOL)
    assert isinstance(json.loads(shaped.arguments), dict)


def test_a_search_reaches_only_the_deferred_tools() -> None:
    registry = catalogue()
    search = ToolSearch(registry, SearchSettings(chooser="lexical", results=10), {}, None)
    text = search.search("read a file, list commits, web search, screenshot")
    assert "## file_read" not in text and all(f"## {name}" in text for name in NAMES)


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 30), min_size=1, max_size=5), limit=st.integers(0, 3000),
       modes=st.lists(st.sampled_from(["auto", "always", "never"]), min_size=5, max_size=5))  # fmt: skip
def test_deferral_defers_every_auto_toolset_past_the_threshold(sizes: list[int], limit: int, modes: list[str]) -> None:
    tools, toolsets = [], {}
    for index, size in enumerate(sizes):
        for number in range(size):
            tools.append(made(f"s{index}_t{number}", f"tool {number} of source {index} " * 3, a={"type": "string"}))
            toolsets[f"s{index}_t{number}"] = f"s{index}"
    defer = {f"s{index}": modes[index] for index in range(len(sizes))}
    flow = make_workflow()
    flow = replace(flow, tools=replace(flow.tools, search=SearchSettings(threshold_tokens=limit, defer=defer)))
    deferral = decide(flow, tools, toolsets, TokenCounter("gpt-4o"))
    for name, mode in defer.items():
        assert mode == "auto" or (name in deferral.deferred) == (mode == "always")
    autos = [f"s{i}" for i, size in enumerate(sizes) if modes[i] == "auto" and size <= 64]
    kept = [name for name in autos if name not in deferral.deferred]
    assert kept in ([], autos)  # all of them or none: past the threshold every auto toolset is searched
    if kept:  # in view only when the threshold is met without deferring them
        assert deferral.sent_tokens <= limit
