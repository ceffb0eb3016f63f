"""A stub never weakens what a case tests: stubbed or not, a case offers the model the same tools (names,
descriptions, schemas) and its calls ask, and are decided, the same; only what the tool returns differs. Driven
across tool kinds (a Python ``@tool``, an MCP server's tool, a local OpenAPI document's operation) x read-only or
mutating x the workflow's approval mode x the case's ``approve``, through the eval runner, the real ``openai``
client and the scripted server over HTTP, a real MCP server and a real HTTP API on 127.0.0.1."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from agent_runtime.config import RuntimeConfig
from agent_runtime.evals import EvalOptions, Runner, load_cases
from agent_runtime.events import ApprovalDecided
from agent_runtime.stores import RunStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.toolsets_support import BILLING_SPEC, notes_server, serve_billing, serve_mcp

TOOLS = '''
from agent_runtime.tools import tool


@tool
def py_read(text: str) -> str:
    """Read a note.

    Args:
        text: The note's title.
    """
    return f"read {text} (the real tool)"


@tool(mutating=True)
def py_write(text: str) -> str:
    """Write a note.

    Args:
        text: What to write.
    """
    return f"wrote {text} (the real tool)"
'''

CALLS = {  # each tool, read-only or mutating, with arguments both it and its stub take
    "py_read": {"text": "a"},
    "py_write": {"text": "a"},
    "notes_search": {"query": "retries"},
    "notes_create_page": {"title": "t", "body": "b"},
    "billing_getInvoice": {"id": "INV-1"},
    "billing_createInvoice": {"body": {"customer": "c", "amount": 3}},
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("parity")
    for name in ("workflows", "evals", "tools", "state"):
        (root / name).mkdir()
    (root / "tools" / "parity_tools.py").write_text(TOOLS)
    (root / "workflows" / "billing.yaml").write_text(yaml.safe_dump(BILLING_SPEC))
    with serve_mcp(notes_server()) as mcp_url, serve_billing() as (api_root, _), pytest.MonkeyPatch.context() as mp:
        tools = {
            "python": ["parity_tools"],
            "mcp": [{"name": "notes", "url": mcp_url, "allow": ["search", "create_page"]}],
            "openapi": [{"name": "billing", "spec": "billing.yaml", "base_url": f"{api_root}/api",
                         "operations": ["getInvoice", "createInvoice"], "allow_http": True}],
        }  # fmt: skip
        flow = {"name": "parity", "description": "d", "prompt": "Use the tool named.", "tools": tools,
                "model": {"name": "gpt-4.1", "context_window": 128_000, "max_output_tokens": 1024}}  # fmt: skip
        (root / "workflows" / "parity.yaml").write_text(yaml.safe_dump(flow))
        for key, value in {"AGENT_TOOLS_PATH": root / "tools", "AGENT_WORKFLOWS_DIR": root / "workflows",
                           "AGENT_STATE_DIR": root / "state", "OPENAI_API_KEY": "test",
                           "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}.items():  # fmt: skip
            mp.setenv(key, str(value))
        yield root


def using_the_named_tool(request: ScriptedRequest) -> Any:
    if request.tool_results():
        return reply("done: " + next(iter(request.tool_results().values())))
    tool = request.last_user_text().removeprefix("use ")
    return call(tool, CALLS[tool])


def run_pair(project: Path, tool: str, approve: str, mode: str) -> list[dict[str, Any]]:
    """The same case twice, without and with a stub of ``tool``: what each offered, asked and was answered."""
    plain = {"name": "plain", "message": f"use {tool}", "approve": approve, "set": {"tools.approval": mode}}
    stubbed = {**plain, "name": "stubbed", "stubs": {tool: "the stub's answer"}}
    suite = project / "evals" / "parity.yaml"
    suite.write_text(yaml.safe_dump({"cases": [plain, stubbed]}))
    seen = []
    for case in load_cases("parity", [suite]):  # one at a time: each case's requests are its own
        with ScriptedServer([using_the_named_tool] * 2) as server:
            os.environ["OPENAI_BASE_URL"] = server.base_url  # the fixture's MonkeyPatch puts it back
            config = RuntimeConfig.from_env()
            runner = Runner(config, EvalOptions(parallel=1))
            [attempt] = runner.run([case])
            offered = sorted(server.requests[0].body["tools"], key=lambda spec: spec["function"]["name"])
            said = next(iter(server.requests[1].tool_results().values()))
        assert attempt.error is None, attempt.error
        record = RunStore(runner.store).load_run(attempt.run_ids[0])
        assert record is not None
        decided = [(event.tool, event.decision) for event in record.events_of(ApprovalDecided)]
        seen.append({"offered": json.dumps(offered, sort_keys=True), "decided": decided, "said": said})
    return seen


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tool=st.sampled_from(sorted(CALLS)),
    approve=st.sampled_from(["none", "all"]),
    mode=st.sampled_from(["mutating", "always", "never"]),
)
def test_a_stub_changes_only_what_a_tool_returns(project: Path, tool: str, approve: str, mode: str) -> None:
    plain, stubbed = run_pair(project, tool, approve, mode)
    assert stubbed["offered"] == plain["offered"]  # the same tools, described the same
    assert stubbed["decided"] == plain["decided"]  # asked (or not), and decided, the same
    mutating = tool in ("py_write", "notes_create_page", "billing_createInvoice")
    asks = mode == "always" or (mode == "mutating" and mutating)
    assert [name for name, _ in plain["decided"]] == ([tool] if asks else [])
    ran = not asks or approve == "all"
    assert ("the stub's answer" in stubbed["said"]) is ran, stubbed["said"]
    assert ("denied by the eval case" in plain["said"]) is not ran, plain["said"]
