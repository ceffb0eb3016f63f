"""Evals replay any workflow (issue 40, point 3), tested where evals meet the features they share tools and spend
with: a stub of the workflow's own Python ``@tool`` (was: "two tools are named 'word_count'"), stubs used by a
sub-agent and its cost counted in the case, a judge counted apart, a failed text check showing what it read, and
the report naming the endpoint and model that answered. Through the eval runner, the real ``openai`` client and
the scripted server over HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.evals import EvalOptions, Runner, build_report, load_cases
from agent_runtime.evals.report import table
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply

TOOLS = '''
from agent_runtime.tools import tool


@tool
def word_count(text: str) -> str:
    """Count the words of a text.

    Args:
        text: The text.
    """
    return f"{len(text.split())} words (the real tool)"
'''

WORKFLOW = """\
name: counter
description: Counts words.
prompt: You count words with the word_count tool.
model: {{name: gpt-4.1, context_window: 128000, max_output_tokens: 1024}}
tools: {{python: [count_tools:word_count]}}
{extra}
"""

SUITE = """\
cases:
  - name: counts-with-the-stub
    message: "How many words are in 'a b c'?"
    stubs:
      word_count: "42 words (the stub)"
    expect:
      contains: ["42 words"]
      not_contains: ["the real tool"]
  - name: a-check-that-fails
    message: "How many words are in 'a b c'?"
    stubs:
      word_count: "42 words (the stub)"
    expect:
      contains: ["seven hundred"]
"""


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    for name in ("workflows", "evals", "tools", "state"):
        (tmp_path / name).mkdir()
    (tmp_path / "tools" / "count_tools.py").write_text(TOOLS)
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
    monkeypatch.setenv("AGENT_WORKFLOWS_DIR", str(tmp_path / "workflows"))
    monkeypatch.setenv("AGENT_EVALS_DIR", str(tmp_path / "evals"))
    monkeypatch.setenv("AGENT_STATE_DIR", str(tmp_path / "state"))
    yield tmp_path


def run_suite(folders: Path, server: ScriptedServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test")
    config = RuntimeConfig.from_env()
    cases = load_cases("counter", [folders / "evals" / "counter.yaml"])
    attempts = Runner(config, EvalOptions(parallel=1)).run(cases)
    return build_report("counter", attempts, {"model": "gpt-4.1", "endpoint": server.base_url})


def counting(request: ScriptedRequest) -> Any:
    if request.system_text().startswith("You are a helper agent"):
        results = request.tool_results()
        return reply(f"the helper found: {next(iter(results.values()))}") if results else call(
            "word_count", {"text": "a b c"})  # fmt: skip
    results = request.tool_results()
    if results:
        return reply(f"The count: {next(iter(results.values()))}")
    if "subagent" in request.tool_names:
        return call("subagent", {"task": "count the words of 'a b c' with word_count"})
    return call("word_count", {"text": "a b c"})


def test_a_stub_replaces_the_workflows_own_python_tool(folders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (folders / "workflows" / "counter.yaml").write_text(WORKFLOW.format(extra=""))
    (folders / "evals" / "counter.yaml").write_text(SUITE)
    with ScriptedServer([counting] * 20) as server:
        report = run_suite(folders, server, monkeypatch)
        offered = [r.tool_names for r in server.requests]
    rows = {row["case"]: row for row in report["cases"]}
    stubbed = rows["counts-with-the-stub"]["runs"][0]
    assert stubbed["error"] is None and stubbed["passed"], stubbed
    assert all(names.count("word_count") == 1 for names in offered)  # replaced, never beside it
    failed = rows["a-check-that-fails"]["runs"][0]
    [check] = [c for c in failed["checks"] if c["name"] == "contains 'seven hundred'"]
    assert not check["passed"] and "42 words (the stub)" in check["detail"]  # the text it read
    shown = table(report)
    assert "answer read" in shown and f"endpoint {server.base_url}" in shown.splitlines()[0]


def test_a_helper_uses_the_stub_and_its_cost_is_the_cases(folders: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Evals x sub-agents: the helper gets the stub in place of the real tool, and the case's cost is the run's
    whole ledger (the helper's calls included)."""
    (folders / "workflows" / "counter.yaml").write_text(WORKFLOW.format(extra="subagents: {enabled: true}"))
    (folders / "evals" / "counter.yaml").write_text(SUITE.split("  - name: a-check-that-fails")[0])
    with ScriptedServer([counting] * 20) as server:
        report = run_suite(folders, server, monkeypatch)
    [run] = report["cases"][0]["runs"]
    assert run["passed"], run
    assert "the helper found: 42 words (the stub)" in run["answer"]
    assert run["model_calls"] == 2  # the run's own calls; the helper's two are in its cost
    assert run["cost_usd"] > 0 and report["summary"]["cost_usd"] == run["cost_usd"]


def test_the_report_says_when_it_ran_on_the_demo_model() -> None:
    summary = {"passed": 0, "attempts": 0, "pass_rate": 0.0, "tokens": 0, "cost_usd": None, "seconds": 0.0}
    report = {"cases": [], "summary": summary, "model": "qwen3-8b", "endpoint": "embedded demo model"}
    first = table(report).splitlines()[0]
    assert "qwen3-8b" in first and "embedded demo model" in first and "canned answers" in first


RUNBOOK = """\
name: runbook
description: Restarts services by the runbook.
prompt: You restart services with the runbook tools.
model: {name: gpt-4.1, context_window: 128000, max_output_tokens: 1024}
tools:
  mcp:
    - {name: runbook, url: "http://127.0.0.1:9/mcp", allow: [restart], approval: always}
    - {name: ops, url: "http://127.0.0.1:9/mcp", allow: [drain, status], mutating: [drain]}
"""

RUNBOOK_SUITE = """\
cases:
  - name: {tool}-{approve}
    message: "use {tool}"
    approve: {approve}
    stubs:
      runbook_restart: "restarted (the stub)"
      ops_drain: "drained (the stub)"
      ops_status: {{returns: "healthy (the stub)"{hint}}}
"""


def using_the_named_tool(request: ScriptedRequest) -> Any:
    results = request.tool_results()
    if results:
        return reply(f"The tool said: {next(iter(results.values()))}")
    return call(request.last_user_text().removeprefix("use "), {})


@pytest.mark.parametrize(
    ("tool", "approve", "hint", "ran"),
    [("runbook_restart", "none", "", False), ("runbook_restart", "all", "", True), ("ops_drain", "none", "", False),
     ("ops_drain", "all", "", True), ("ops_status", "none", ", mutating: false", True),
     ("ops_status", "none", "", False)],
)  # fmt: skip
def test_a_stub_keeps_its_sources_approval_rule(
    folders: Path, monkeypatch: pytest.MonkeyPatch, tool: str, approve: str, hint: str, ran: bool
) -> None:
    """Evals x approvals: a stub of an MCP tool whose server says ``approval: always`` (or lists it as mutating)
    asks, as the real tool would in a run: ``approve: none`` denies it, ``all`` runs it; a tool its source says
    nothing of asks as a server's tool without a read-only hint does, unless the stub gives that hint
    (``mutating: false``) (was: every stub ran, whatever its source's rule)."""
    (folders / "workflows" / "runbook.yaml").write_text(RUNBOOK)
    (folders / "evals" / "runbook.yaml").write_text(RUNBOOK_SUITE.format(tool=tool, approve=approve, hint=hint))
    with ScriptedServer([using_the_named_tool] * 2) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "test")
        cases = load_cases("runbook", [folders / "evals" / "runbook.yaml"])
        [attempt] = Runner(RuntimeConfig.from_env(), EvalOptions(parallel=1)).run(cases)
        said = next(iter(server.requests[1].tool_results().values()))
    assert attempt.error is None and [c["name"] for c in attempt.tool_calls] == [tool]
    assert ("(the stub)" in said) is ran and (attempt.tool_calls[0]["error"] is not ran), said
    if not ran:
        assert "denied by the eval case (approve: none)" in said
