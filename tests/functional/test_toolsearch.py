"""Tools disclosed progressively, through the real paths: an MCP server of 200 tools (the mcp package's own server
over streamable HTTP) attached without allow:, found by tool_search, called through call_tool; approvals, an
eval's stub, a resumed run, a helper and the chooser's own window, each with a found tool."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_runtime import build_agent
from agent_runtime.approvals.gate import ApprovalRequest, Decision
from agent_runtime.evals.cases import Stub, StubRule
from agent_runtime.evals.stubs import stub_tools
from agent_runtime.record import RunStatus
from agent_runtime.runtime import Services
from agent_runtime.stores import LocalStore, RunStore, StoreFileStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.toolsearch import FOUND
from agent_runtime.toolsearch.search import LISTED
from agent_runtime.toolsets import ToolEnv
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from tests.conftest import model_for
from tests.toolsets_support import crowded_server, serve_mcp
from tests.workflow_tools_support import SECRETS, workflow

Start = Callable[..., ScriptedServer]
FILLER = 196  # with the four below: a server of 200 tools


def big_server(commits: list[str], deleted: list[str]) -> MCPServer:
    """200 tools: four that mean something, and 196 that are noise to be searched past."""
    server = MCPServer("big")

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def list_commits(repo: str, since: str = "") -> str:
        """List the commits of a repository (author, date, message), newest first, since a date."""
        commits.append(repo)
        return f"{repo}: 3f2a1 'retry backoff' by dana on {since or 'monday'}"

    @server.tool()
    def delete_branch(repo: str, branch: str) -> str:
        """Delete a branch of a repository."""
        deleted.append(branch)
        return f"deleted {branch}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def take_screenshot(url: str) -> str:
        """Capture an image of a web page in the browser."""
        return "screenshot saved"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search_issues(query: str) -> str:
        """Search the issue tracker by words."""
        return "no issue"

    doc = "Adjust gadget number {n} of the warehouse's inventory, a routine operation."
    return crowded_server(FILLER, server, name="gadget", doc=doc)


def agent(server: ScriptedServer, tmp_path: Path, url: str, *, approver: Any = None, tools: Any = (),
          search: dict[str, Any] | None = None) -> Any:  # fmt: skip
    flow = workflow(tmp_path, {"mcp": [{"name": "big", "url": url}], "search": search or {"chooser": "lexical"}})
    store = LocalStore(tmp_path / "state")
    services = Services(runs=RunStore(store), tool_env=ToolEnv(secrets=SECRETS.get), approver=approver)
    return build_agent(flow, model_for(server), services, files=StoreFileStore(store, "thread#T"), tools=tools)


def seen(requests: list[ScriptedRequest], step: Any) -> Callable[[ScriptedRequest], Any]:
    def respond(request: ScriptedRequest) -> Any:
        requests.append(request)
        return step

    return respond


def via(name: str, **arguments: Any) -> Any:
    return call("call_tool", {"name": name, "arguments": arguments})


def test_a_server_of_200_tools_is_attached_whole_and_its_tools_found_and_called(
    scripted: Start, tmp_path: Path
) -> None:
    commits: list[str] = []
    requests: list[ScriptedRequest] = []
    with serve_mcp(big_server(commits, [])) as url:
        server = scripted(
            seen(requests, call("tool_search", {"need": "the commits of the payments repository since monday"})),
            seen(requests, via("big_list_commits", repo="payments", since="monday")),
            seen(requests, reply("Dana changed the retry backoff.")),
        )
        built = agent(server, tmp_path, url)
        assert len([name for name in built.tools.names() if name.startswith("big_")]) == 200  # all callable
        record = built.run("Who changed the retry code in payments since monday?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    sent = [request.tool_names for request in requests]
    assert sent[0] == sent[1] == sent[2]  # the list is fixed: the prompt cache keeps its prefix
    assert {"tool_search", "call_tool"} <= set(sent[0]) and not [n for n in sent[0] if n.startswith("big_")]
    found = requests[1].tool_results()
    assert any("## big_list_commits" in text and '"repo"' in text for text in found.values())
    assert commits == ["payments"]  # the real server ran it
    assert [c["name"] for c in record.tool_calls] == ["tool_search", "big_list_commits"]
    stored = [m for m in record.state.messages if m["role"] == "assistant" and m.get("tool_calls")]
    assert stored[1]["tool_calls"][0]["function"]["name"] == "big_list_commits"  # the history names the tool
    assert FOUND.get(record.state.context)[0] == "big_list_commits"
    assert [e["found"][0] for e in record.events if e["type"] == "tools_found"] == ["big_list_commits"]


def test_a_found_mutating_tool_waits_for_approval_and_a_resumed_run_keeps_its_found_tools(
    scripted: Start, tmp_path: Path
) -> None:
    """The found tool keeps its mark (mutating: the server gives no read-only hint) and its approval; the run
    waits, its checkpoint keeps what it found, and the run resumed in a new agent calls both found tools."""
    commits: list[str] = []
    deleted: list[str] = []
    asked: list[ApprovalRequest] = []

    class Pending:
        def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
            asked.append(request)
            return Decision.PENDING, None

    class Yes:
        def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
            return Decision.APPROVED, "the lead"

    requests: list[ScriptedRequest] = []
    with serve_mcp(big_server(commits, deleted)) as url:
        first = scripted(
            seen(requests, call("tool_search", {"need": "delete a branch, and list commits of a repository"})),
            seen(requests, via("big_delete_branch", repo="payments", branch="old-retry")),
        )
        record = agent(first, tmp_path, url, approver=Pending()).run("Delete old-retry in payments.")
        assert record.status is RunStatus.AWAITING_APPROVAL, record.stop_reason
        assert deleted == [] and [request.tool for request in asked] == ["big_delete_branch"]
        second = scripted(
            seen(requests, via("big_list_commits", repo="payments")),
            seen(requests, reply("Deleted; the last commit is the retry backoff.")),
        )
        resumed = agent(second, tmp_path, url, approver=Yes())
        stored = RunStore(LocalStore(tmp_path / "state")).load_checkpoint(record.run_id)
        assert stored is not None
        state = stored[0]
        assert {"big_delete_branch", "big_list_commits"} <= set(FOUND.get(state.context))
        done = resumed.run(state=state)
    assert done.status is RunStatus.COMPLETED, done.stop_reason
    assert deleted == ["old-retry"] and commits == ["payments"]
    assert requests[-1].tool_names == requests[0].tool_names


def test_an_eval_stubs_a_found_tool(scripted: Start, tmp_path: Path) -> None:
    """A stub stands in for a deferred tool: it stays deferred, is found by the search as that tool, and answers."""
    stub = Stub("big_list_commits", (StubRule("stubbed: $repo has 2 commits"),), parameters={"type": "object"})
    requests: list[ScriptedRequest] = []
    with serve_mcp(big_server([], [])) as url:
        server = scripted(
            seen(requests, call("tool_search", {"need": "list the commits of a repository"})),
            seen(requests, via("big_list_commits", repo="payments")),
            seen(requests, reply("Two commits.")),
        )
        flow = workflow(tmp_path, {"mcp": [{"name": "big", "url": url}], "search": {"chooser": "lexical"}})
        built = agent(server, tmp_path, url, tools=stub_tools(flow, [stub]))
        assert built.tools.get("big_list_commits").stub and built.tools.get("big_list_commits").deferred
        record = built.run("How many commits in payments?")
    assert record.status is RunStatus.COMPLETED
    assert "stubbed: payments has 2 commits" in requests[2].tool_results().values()
    assert "big_list_commits" not in requests[0].tool_names


def test_the_chooser_picks_in_its_own_window_and_is_charged(scripted: Start, tmp_path: Path) -> None:
    """The chooser's request carries the need, the candidates and the catalogue's names (no tool list, no run
    history); it may pick a tool the lexical stage missed, never one outside the catalogue; its call is the run's."""
    chooser_requests: list[ScriptedRequest] = []

    def intercept(request: ScriptedRequest) -> Any:
        if "You pick tools" not in request.system_text():
            return None
        chooser_requests.append(request)
        return reply("big_take_screenshot\nsomething_made_up\nbig_list_commits")

    requests: list[ScriptedRequest] = []
    with serve_mcp(big_server([], [])) as url:
        server = scripted(
            seen(requests, call("tool_search", {"need": "a picture of our status page"})),
            seen(requests, reply("Done.")),
            intercept=intercept,
        )
        record = agent(server, tmp_path, url, search={"chooser": "model"}).run("Show me the status page.")
    assert record.status is RunStatus.COMPLETED
    [asked] = chooser_requests
    assert asked.tool_names == [] and len(asked.messages) == 2
    assert "a picture of our status page" in asked.last_user_text() and "big_gadget_7" in asked.system_text()
    result = next(iter(requests[1].tool_results().values()))
    assert result.index("## big_take_screenshot") < result.index("## big_list_commits")
    assert "something_made_up" not in result
    [event] = [e for e in record.events if e["type"] == "tools_found"]
    assert event["stage"] == "chooser" and event["found"] == ["big_take_screenshot", "big_list_commits"]
    assert [c.get("purpose") for c in record.model_calls] == [None, "tool_search", None]
    assert json.dumps(record.to_dict()["cost"])  # priced like any call (source "search" when prices are known)


def test_a_helper_gets_the_tools_its_parent_found(scripted: Start, tmp_path: Path) -> None:
    """The parent found a tool before it started the helper: the helper has it in its own tool list (its window
    has no search result), and its other deferred tools to search; the helper calls it, the real server runs it."""
    from dataclasses import replace

    from agent_runtime.workflows.subagents import SubagentSettings

    commits: list[str] = []
    requests: list[ScriptedRequest] = []
    with serve_mcp(big_server(commits, [])) as url:
        server = scripted(
            seen(requests, call("tool_search", {"need": "the commits of a repository"})),
            seen(requests, call("subagent", {"task": "List the commits of payments and summarise them."})),
            seen(requests, call("big_list_commits", {"repo": "payments"})),  # the helper's own first request
            seen(requests, reply("One commit: the retry backoff.")),  # the helper's answer
            seen(requests, reply("The helper says: one commit.")),
        )
        flow = workflow(tmp_path, {"mcp": [{"name": "big", "url": url}], "search": {"chooser": "lexical"}})
        flow = replace(flow, subagents=SubagentSettings(enabled=True))
        store = LocalStore(tmp_path / "state")
        services = Services(runs=RunStore(store), tool_env=ToolEnv(secrets=SECRETS.get))
        built = build_agent(flow, model_for(server), services, files=StoreFileStore(store, "thread#T"))
        record = built.run("Summarise the commits of payments.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    helper = requests[2].tool_names
    assert "big_list_commits" in helper and "tool_search" in helper and "big_delete_branch" not in helper
    assert "big_list_commits" not in requests[1].tool_names  # the parent's list stays fixed
    assert commits == ["payments"]


def test_an_eval_checks_which_tools_a_search_found_and_reports_a_miss(tmp_path: Path, monkeypatch: Any) -> None:
    """Through the eval runner: a case stubs a deferred tool (the search finds the stub as that tool, the call is
    answered by it) and expects it found; a case that expects a tool no search found fails with a search miss."""
    import yaml
    from agent_runtime.config import RuntimeConfig
    from agent_runtime.evals import EvalOptions, Runner, load_cases

    with serve_mcp(big_server([], [])) as url, ScriptedServer([
        call("tool_search", {"need": "list the commits of a repository"}),
        via("big_list_commits", repo="payments"),
        reply("Two commits."),
        call("tool_search", {"need": "list the commits of a repository"}),
        reply("I did not look further."),
    ]) as server:  # fmt: skip
        folder = tmp_path / "workflows"
        folder.mkdir()
        flow = {"name": "whole", "description": "d", "prompt": "You help.",
                "model": {"name": "gpt-4o", "context_window": 128_000, "max_output_tokens": 1024},
                "tools": {"mcp": [{"name": "big", "url": url}], "search": {"chooser": "lexical"}}}  # fmt: skip
        (folder / "whole.yaml").write_text(yaml.safe_dump(flow))
        stub = {"big_list_commits": "stubbed: payments has 2 commits"}
        cases = [{"name": "found", "message": "Commits of payments?", "stubs": stub,
                  "expect": {"tools_found": ["big_list_commits"], "tools_called": ["big_list_commits"]}},
                 {"name": "missed", "message": "Take a screenshot of the status page.", "stubs": stub,
                  "expect": {"tools_found": ["big_take_screenshot"]}}]  # fmt: skip
        (tmp_path / "whole.yaml").write_text(yaml.safe_dump({"cases": cases}))
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "scripted")
        config = RuntimeConfig.from_env({**os.environ, "AGENT_WORKFLOWS_DIR": str(folder),
                                         "AGENT_STATE_DIR": str(tmp_path / "state")})  # fmt: skip
        attempts = Runner(config, EvalOptions(parallel=1)).run(load_cases("whole", [tmp_path / "whole.yaml"]))
    found, missed = attempts
    assert found.passed, [c.to_dict() for c in found.checks]
    assert found.found[0] == "big_list_commits" and found.to_dict()["tools_found"][0] == "big_list_commits"
    assert "stubbed: payments has 2 commits" in server.requests[2].tool_results().values()
    [miss] = [c for c in missed.checks if c.name == "found big_take_screenshot"]
    assert not miss.passed and miss.detail.startswith("search miss: found big_list_commits")


def test_a_large_skills_catalogue_is_searched_not_listed(scripted: Start, tmp_path: Path) -> None:
    """Past tools.search.skills_listed the prompt names how many skills there are, not each; tool_search finds the
    one a task needs by what it says, and load_skill loads it."""
    from agent_runtime.skills import SkillLibrary

    topics = ["release notes for a version", "incident postmortem write-up", "quarterly budget review"]
    topics += [f"routine chore number {n} of the office" for n in range(25)]
    for number, topic in enumerate(topics):
        name = f"skill-{number}"
        folder = tmp_path / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: How to write a {topic}.\n---\n"
                                         f"# {topic}\nStart with the facts of the {topic}.\n")  # fmt: skip
    requests: list[ScriptedRequest] = []
    server = scripted(
        seen(requests, call("tool_search", {"need": "write the postmortem of yesterday's incident"})),
        seen(requests, call("load_skill", {"name": "skill-1"})),
        seen(requests, reply("Postmortem drafted.")),
    )
    flow = workflow(tmp_path, {"search": {"chooser": "lexical", "results": 2}})
    services = Services(skills=SkillLibrary(tmp_path / "skills"))
    record = build_agent(flow, model_for(server), services).run("Draft the postmortem.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    system = requests[0].system_text()
    assert "28 skills are available: find the one a task needs with tool_search" in system
    assert "skill-1" not in system and "tool_search" in requests[0].tool_names
    found = next(iter(requests[1].tool_results().values()))
    assert found.startswith("## skill skill-1\nHow to write a incident postmortem write-up.")
    assert "Start with the facts of the incident postmortem" in next(iter(requests[2].tool_results().values()))


def test_found_tools_stay_callable_after_compaction_and_runs_show_names_the_search(
    scripted: Start, tmp_path: Path
) -> None:
    """In a small window a summary takes the search's result away and its tool joins the tool list (the schema stays
    in view), the found tool is still called through call_tool after it, and the transcript says what was
    searched, found and called."""
    from dataclasses import replace

    from agent_runtime.reading.show import transcript
    from agent_runtime.views import read_run

    commits: list[str] = []
    requests: list[ScriptedRequest] = []
    summaries: list[str] = []

    def intercept(request: ScriptedRequest) -> Any:
        summaries.extend([request.last_user_text()] if request.is_compaction() else [])
        return reply("Summary: the commits of payments were listed.") if request.is_compaction() else None

    with serve_mcp(big_server(commits, [])) as url:
        steps = [seen(requests, call("tool_search", {"need": "the commits of a repository"}))]
        since = "the day of the retry change, " * 25  # long arguments: what masking cannot shrink
        steps += [seen(requests, via("big_list_commits", repo=f"payments-{n}", since=since)) for n in range(30)]
        server = scripted(*steps, seen(requests, reply("Listed.")), intercept=intercept)
        flow = workflow(tmp_path, {"mcp": [{"name": "big", "url": url}], "search": {"chooser": "lexical"}})
        flow = replace(flow, context=replace(flow.context, context_budget=8_000, mask_threshold_tokens=0))
        store = LocalStore(tmp_path / "state")
        services = Services(runs=RunStore(store), tool_env=ToolEnv(secrets=SECRETS.get))
        record = build_agent(flow, model_for(server), services, files=StoreFileStore(store, "thread#T")).run("Go.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert "summary" in [e["tactic"] for e in record.events if e["type"] == "compaction"], "no summary was made"
    # The schema stays in view in every request after the search: in the search's result, and once a summary took
    # that away, in the tool list (the prompt cache was lost there anyway), for the rest of the run.
    shown = ["## big_list_commits" in json.dumps(r.messages) or "big_list_commits" in r.tool_names for r in requests]
    listed = ["big_list_commits" in r.tool_names for r in requests]
    assert all(shown[1:]) and not listed[0] and listed[-1] and listed == sorted(listed)
    assert "big_list_commits" in LISTED.get(record.state.context)
    # The summary call read the search's result as what it found (the schema joins the tool list), the archive
    # keeps it whole.
    assert "Found: big_list_commits, " in summaries[0] and "(author, date" not in summaries[0]
    archive = next(e["archive_file"] for e in record.events if e["type"] == "compaction")
    assert b"List the commits of a repository (author, date" in StoreFileStore(store, "thread#T").read(archive)
    with serve_mcp(big_server(commits, [])) as url:  # the thread's next turn, in a new agent: the same tool list
        later: list[ScriptedRequest] = []
        again = scripted(seen(later, reply("Still here.")))
        declared = {"mcp": [{"name": "big", "url": url}], "search": {"chooser": "lexical"}}
        flow = replace(workflow(tmp_path, declared), context=flow.context)
        build_agent(flow, model_for(again), services).run("And now?", state=record.state)
    assert "big_list_commits" in later[0].tool_names
    assert len(commits) == 30  # every call ran, after the compaction too
    shown = transcript(read_run(record.to_dict()), record.state.messages)
    assert "tool search (lexical): found big_list_commits" in shown and "big_list_commits" in shown
