"""Sub-agents in real runs: parent and child talk to the same scripted server; the child is recognised by its
system prompt and served from its own script."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import replace
from types import MappingProxyType
from typing import Any

from agent_runtime import RunStatus
from agent_runtime.files import InMemoryFileStore
from agent_runtime.runtime import build_agent
from agent_runtime.subagents import SubagentSettings
from agent_runtime.testing import Reply, ScriptedRequest, ScriptedServer, call, reply

from tests.conftest import make_workflow, model_for
from tests.subagents_support import child_script, is_child, long_doc, parent

Start = Callable[..., ScriptedServer]


def test_the_child_works_in_its_own_window_and_only_its_answer_returns(scripted: Start) -> None:
    files = InMemoryFileStore()
    doc = files.put(long_doc(300), name="contract.txt")
    child = child_script(
        call("file_regex", {"id": doc.id, "pattern": "clause 42 "}),
        call("file_read", {"id": doc.id, "start_line": 40, "end_line": 44}),
        reply("Clause 42 names SECRET-42 (contract.txt line 42)."),
    )
    server = scripted(
        call("subagent", {"task": "Find clause 42 and report its vendor id.", "files": [doc.id]}),
        lambda r: reply(next(iter(r.tool_results().values()))),
        intercept=child,
    )
    record = parent(server, files).run("What does clause 42 say?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert record.final_answer == "Clause 42 names SECRET-42 (contract.txt line 42)."
    assert child.queue == []  # type: ignore[attr-defined]
    parent_requests = [r for r in server.requests if not is_child(r)]
    child_requests = [r for r in server.requests if is_child(r)]
    assert len(child_requests) == 3
    for request in parent_requests:
        sent = json.dumps(request.messages)
        assert "file_regex" not in sent and "clause 41" not in sent  # the child's calls and reads stay there
    # the child's reads of the shared file are in the parent's ledger and status
    reads = [e for e in record.events if e["type"] == "file_read"]
    assert [e["tool"] for e in reads] == ["subagent/file_regex", "subagent/file_read"]
    status = parent_requests[-1].status_text()
    assert re.search(rf"{doc.id} \"contract\.txt\" .* read lines 40-44", status)
    # the child's record is linked from the parent's
    [child_record] = record.children
    assert child_record["status"] == "completed" and child_record["run_id"].startswith(record.run_id + ".sub")
    [event] = [e for e in record.events if e["type"] == "subagent"]
    assert event["run_id"] == child_record["run_id"] and event["tool_calls"] == 2
    # the child saw only the shared file, and had no subagent tool of its own (depth cap 1)
    assert doc.id in child_requests[0].system_text()
    assert "subagent" not in child_requests[0].tool_names


def test_a_large_child_answer_comes_back_as_a_virtual_file(scripted: Start) -> None:
    files = InMemoryFileStore()
    big_answer = "\n".join(f"finding {n}: SECRET-{n} is fine" for n in range(3000))
    server = scripted(
        call("subagent", {"task": "List every finding."}),
        lambda r: reply(next(iter(r.tool_results().values()))[:200]),
        intercept=child_script(reply(big_answer)),
    )
    record = parent(server, files).run("go")
    assert record.final_answer.startswith("[virtual file file-")
    assert "result of subagent" in record.final_answer
    file_id = re.search(r"(file-[0-9a-f]+)", record.final_answer).group(1)
    assert files.read(file_id).decode() == big_answer


def test_depth_cap_lets_children_nest_only_as_deep_as_allowed(scripted: Start) -> None:
    files = InMemoryFileStore()
    seen: list[list[str]] = []

    def child_steps(request: ScriptedRequest) -> Reply:
        seen.append(request.tool_names)
        if "subagent" in request.tool_names:
            return call("subagent", {"task": "grandchild work"})
        return reply("leaf done")

    def serve(request: ScriptedRequest) -> Reply | None:
        if not is_child(request):
            return None
        results = request.tool_results()
        return reply("child done: " + next(iter(results.values()))) if results else child_steps(request)

    server = scripted(
        call("subagent", {"task": "delegate"}), lambda r: reply(next(iter(r.tool_results().values()))), intercept=serve
    )
    record = parent(server, files, max_depth=2).run("go")
    assert record.final_answer == "child done: leaf done"
    assert ["subagent" in names for names in seen] == [True, False]  # the child may spawn, the grandchild may not


def test_budgets_end_the_child_with_a_clear_error(scripted: Start) -> None:
    files = InMemoryFileStore()
    doc = files.put(long_doc(50), name="a.txt")
    greedy = child_script(
        # the parent's cap of 2 minus its own subagent call leaves the child 1 call: the second read is refused
        *[call("file_read", {"id": doc.id, "start_line": n, "end_line": n}) for n in range(1, 3)],
        reply("only line 1 was read"),  # the child's last answer at its cap
    )
    server = scripted(
        call("subagent", {"task": "read forever", "files": [doc.id]}),
        lambda r: reply(next(iter(r.tool_results().values()))),
        intercept=greedy,
    )
    record = parent(server, files, max_tool_calls=2).run("go")
    assert record.final_answer.startswith("only line 1 was read\n\n[the helper reached its tool-call limit")
    assert record.children[0]["status"] == "tool_call_limit"

    spender = child_script(Reply(text="x" * 40, calls=(call("file_read", {"id": doc.id}).calls[0],)))
    server = scripted(
        call("subagent", {"task": "spend", "files": [doc.id]}),
        lambda r: reply(next(iter(r.tool_results().values()))),
        intercept=spender,
    )
    record = parent(server, files, max_tokens=100).run("go")
    assert re.match(
        r"ERROR: the helper stopped \(failed\): the helper used [\d,]+ tokens, over its budget of 100",
        record.final_answer,
    )


def test_parent_tool_budget_bounds_the_child_and_counts_its_calls(scripted: Start) -> None:
    files = InMemoryFileStore()
    doc = files.put(long_doc(20), name="a.txt")
    child = child_script(call("file_read", {"id": doc.id, "start_line": 1, "end_line": 2}), reply("ok"))
    server = scripted(
        call("subagent", {"task": "read", "files": [doc.id]}),
        call("subagent", {"task": "again", "files": [doc.id]}),
        reply("read once"),
        intercept=child,
    )
    record = parent(server, files, max_tool_calls=2).run("go")
    # 1 parent call + 1 child call use the cap of 2: the second subagent call is refused by the parent's cap
    assert record.status is RunStatus.TOOL_CALL_LIMIT


def test_bad_requests_from_the_model_are_tool_errors(scripted: Start) -> None:
    files = InMemoryFileStore()
    server = scripted(
        call("subagent", {"task": "t", "model": "gpt-9"}),
        call("subagent", {"task": "t", "files": ["file-000000000000"]}),
        call("subagent", {"task": "t", "skills": ["notion-formatting"]}),
        reply("done"),
    )
    agent = parent(server, files, models=MappingProxyType({"gpt-4o": 128_000, "gpt-4.1": 1_047_576}))
    agent.run("go")
    results = [next(iter(r.tool_results().values())) for r in server.requests[1:]]
    assert results[0] == "ERROR: model 'gpt-9' is not allowed for helpers; allowed: gpt-4o, gpt-4.1"
    assert results[1].startswith("ERROR: no file with id 'file-000000000000'")
    assert results[2] == "ERROR: skills ['notion-formatting'] are not available; available: none"
    tool = next(t for t in server.requests[0].body["tools"] if t["function"]["name"] == "subagent")
    assert "gpt-4.1 (1,047,576 tokens)" in tool["function"]["parameters"]["properties"]["model"]["description"]


def test_parallel_helpers_get_distinct_run_ids_and_the_cap_holds(scripted: Start) -> None:
    """Was: two subagent calls in one turn were both '….sub1', and tool_calls_used reached 4 under a cap of 3."""
    from agent_runtime.testing import calls

    files = InMemoryFileStore()
    doc = files.put(long_doc(20), name="a.txt")
    child = child_script(
        *[call("file_read", {"id": doc.id, "start_line": 1, "end_line": 2}), reply("ok")] * 2,
    )
    task = {"task": "read", "files": [doc.id]}
    server = scripted(calls(("subagent", task), ("subagent", task)), reply("both done"), intercept=child)
    record = parent(server, files, max_tool_calls=3).run("go")
    ids = [c["run_id"] for c in record.children]
    assert len(set(ids)) == len(ids)
    assert record.state is not None and record.state.tool_calls_used <= 3


def test_agent_model_and_the_tokenizer_reach_helpers_and_a_cut_off_helper_answer_says_so(
    scripted: Start, monkeypatch: Any
) -> None:
    """Was: with AGENT_MODEL set, helpers still asked for the workflow's helper models (gpt-4.1: a 404 on Ollama
    or vLLM, and the local run priced as gpt-4.1), and a helper's answer cut off at its output limit reached the
    parent with no note."""
    from agent_runtime.config import RuntimeConfig
    from agent_runtime.context import ContextEngine
    from agent_runtime.runtime import deployed
    from agent_runtime.workflows import ModelSettings

    seen: list[tuple[str, str]] = []
    child = child_script(Reply(text="The first half of the summ", finish_reason="length"))

    def spy(request: ScriptedRequest) -> Any:
        seen.append(("child" if is_child(request) else "parent", request.body["model"]))
        return child(request)

    server = scripted(
        call("subagent", {"task": "Summarise."}),
        lambda r: reply(next(iter(r.tool_results().values()))),
        intercept=spy,
    )
    base = make_workflow()
    helpers = SubagentSettings(enabled=True, models=MappingProxyType({"gpt-4.1": 1_047_576, "gpt-4.1-mini": 200_000}))
    workflow = replace(base, model=ModelSettings("gpt-4.1", 128_000, 1024, "cl100k_base"), subagents=helpers)
    config = RuntimeConfig.from_env({"AGENT_MODEL": "local-model", "OPENAI_BASE_URL": server.base_url})
    local = deployed(workflow, config)
    assert local.model.name == "local-model" and dict(local.subagents.models) == {"local-model": 1_047_576}
    engines: list[ContextEngine] = []
    original = ContextEngine.__init__

    def remember(self: ContextEngine, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        engines.append(self)

    monkeypatch.setattr(ContextEngine, "__init__", remember)
    model = model_for(server).with_name(local.model.name)
    record = build_agent(local, model, files=InMemoryFileStore()).run("Summarise it.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert {model for _, model in seen} == {"local-model"} and ("child", "local-model") in seen
    assert [engine.counter.encoding.name for engine in engines] == ["cl100k_base", "cl100k_base"]
    assert record.final_answer.startswith("The first half of the summ")
    assert "[the helper's answer is incomplete: the answer was cut off" in record.final_answer
    assert record.cost_usd() is None  # no list price for a local model, and none made up
