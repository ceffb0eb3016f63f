"""Workflow tools end to end: a real MCP server (the `mcp` package's own, streamable HTTP on 127.0.0.1), a real
HTTP server with an OpenAPI document, and Python functions — declared in a workflow's `tools:` section and used
through the real `openai` client and the scripted model."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from agent_runtime import RunStatus, Services
from agent_runtime.errors import ConfigError
from agent_runtime.runtime import build_agent
from agent_runtime.stores import LocalStore, RunStore, StoreFileStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.toolsets import SecretMissingError, ToolEnv

from tests.conftest import model_for
from tests.toolsets_support import BILLING_SPEC, crowded_server, notes_server, serve_billing, serve_mcp
from tests.workflow_tools_support import SECRETS, agent_for, billing_workflow, seen_by, workflow

Start = Callable[..., ScriptedServer]


def test_mcp_tools_are_listed_filtered_called_and_their_images_kept(scripted: Start, tmp_path: Path) -> None:
    created: list[str] = []
    with serve_mcp(notes_server(created=created)) as url:
        source = {"name": "notes", "url": url, "allow": ["search", "create_page", "chart"]}
        source["headers"] = {"Authorization": "Bearer ${secret:notes_token}"}
        flow = workflow(tmp_path, {"mcp": [source]})
        requests: list[ScriptedRequest] = []
        server = scripted(
            seen_by(requests, call("notes_search", {"query": "retries"})),
            seen_by(requests, call("notes_create_page", {"title": "Triage", "body": "REQ-7 holds"})),
            seen_by(requests, call("notes_chart", {})),
            seen_by(requests, reply("Done.")),
        )
        record = agent_for(server, flow, tmp_path).run("Look it up and write it down.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert {"notes_search", "notes_create_page", "notes_chart"} <= set(requests[0].tool_names)
    assert "notes_hang" not in requests[0].tool_names  # not in allow
    assert "back off exponentially" in next(iter(requests[1].tool_results().values()))
    assert created == ["Triage"]
    [mutating] = [c for c in record.tool_calls if c["name"] == "notes_create_page"]
    assert mutating["mutating"] is True  # no readOnlyHint: journalled, run alone
    [chart] = requests[3].tool_results().values()
    assert "image/png saved as file file-" in chart
    assert "notes-secret-456" not in json.dumps(record.to_dict())


def test_mcp_failures_are_tool_errors_and_the_run_goes_on(scripted: Start, tmp_path: Path) -> None:
    with serve_mcp(notes_server()) as url:
        notes = {"name": "notes", "url": url, "timeout_seconds": 2, "deny": ["create_page", "dump"]}
        bulk = {"name": "bulk", "url": url, "allow": ["dump"]}  # the same server, with the default timeout
        flow = workflow(tmp_path, {"mcp": [notes, bulk]})
        requests: list[ScriptedRequest] = []
        server = scripted(
            seen_by(requests, call("notes_hang", {"seconds": 5})),
            seen_by(requests, call("notes_broken", {})),
            seen_by(requests, call("bulk_dump", {"megabytes": 50})),
            seen_by(requests, call("notes_search", {"query": 7})),
            seen_by(requests, call("notes_search", {"query": "webhook"})),
            seen_by(requests, reply("Recovered.")),
        )
        record = agent_for(server, flow, tmp_path).run("Try everything.")
    assert record.status is RunStatus.COMPLETED
    results = [next(iter(r.tool_results().values())) for r in requests[1:]]
    assert "did not answer within 2 s" in results[0]
    assert results[1].startswith("ERROR:") and "the index is rebuilding" in results[1]
    assert results[2].startswith("ERROR:") and "limit" in results[2]  # 50 MB: refused, bounded
    assert results[3].startswith("ERROR: invalid arguments") and "query" in results[3]
    assert "Webhook retries" in results[4]  # after a timeout the session was reopened


def test_an_unreachable_mcp_server_costs_its_tools_not_the_run(scripted: Start, tmp_path: Path) -> None:
    flow = workflow(tmp_path, {"mcp": [{"name": "gone", "url": "http://127.0.0.1:9/mcp"}]})
    requests: list[ScriptedRequest] = []
    server = scripted(seen_by(requests, reply("Answered without it.")))
    record = agent_for(server, flow, tmp_path).run("Go.")
    assert record.status is RunStatus.COMPLETED
    assert "Tools of the MCP server 'gone' are unavailable in this run" in requests[0].system_text()


def test_a_server_with_500_tools_never_deferred_needs_an_allow_list(tmp_path: Path) -> None:
    """A listing problem costs that server's tools (or the one tool), not every run: the prompt says why, and
    `workflows validate` reports it. (Deferred, the default past the threshold, it needs no list: toolsearch.)"""
    from agent_runtime.toolsets import validate_tools

    with serve_mcp(crowded_server(500)) as url:
        flow = workflow(tmp_path, {"mcp": [{"name": "crowded", "url": url}], "search": {"defer": {"crowded": "never"}}})
        with ScriptedServer([]) as server:
            agent = agent_for(server, flow, tmp_path)
            assert not [name for name in agent.tools.names() if name.startswith("crowded_")]
            said = "\n".join(agent.prompt_sections)
            assert "lists 500 tools; name the ones this workflow uses with allow" in said
            assert validate_tools(flow, ToolEnv(secrets=SECRETS.get), []).errors
            allowed = workflow(tmp_path, {"mcp": [{"name": "crowded", "url": url, "allow": ["op_7", "op_9"]}]})
            agent = agent_for(server, allowed, tmp_path)
            assert {"crowded_op_7", "crowded_op_9"} <= set(agent.tools.names())
            unknown = workflow(tmp_path, {"mcp": [{"name": "crowded", "url": url, "allow": ["op_7", "nope"]}]})
            agent = agent_for(server, unknown, tmp_path)
            assert "crowded_op_7" in agent.tools.names()
            assert "the server lists no tool 'nope'" in "\n".join(agent.prompt_sections)


def test_openapi_operations_become_tools_with_their_parameters_and_body(scripted: Start, tmp_path: Path) -> None:
    with serve_billing() as (root, api):
        flow = billing_workflow(tmp_path, root, timeout_seconds=1)
        requests: list[ScriptedRequest] = []
        server = scripted(
            seen_by(requests, call("billing_getInvoice", {"id": "INV-1"})),
            seen_by(requests, call("billing_listInvoices", {"status": "open", "X-Tenant": "acme"})),
            seen_by(requests, call("billing_createInvoice", {"body": {"customer": "Initech", "amount": 99.5}})),
            seen_by(requests, call("billing_statement", {})),
            seen_by(requests, call("billing_getInvoice", {"id": "INV-404"})),
            seen_by(requests, call("billing_exportAll", {})),
            seen_by(requests, call("billing_slowReport", {})),
            seen_by(requests, call("billing_createInvoice", {"body": {"customer": "x"}})),
            seen_by(requests, reply("Billing checked.")),
        )
        record = agent_for(server, flow, tmp_path).run("Check billing.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    results = [next(iter(r.tool_results().values())) for r in requests[1:]]
    assert json.loads(results[0])["customer"] == "ACME"
    assert [i["id"] for i in json.loads(results[1])] == ["INV-1"]
    sent = next(r for r in api.requests if r["path"] == "/api/invoices" and r["method"] == "GET")
    assert sent["query"] == {"status": ["open"]} and sent["headers"]["X-Tenant"] == "acme"
    assert json.loads(results[2])["id"] == "INV-2"
    assert "application/pdf response saved as file" in results[3]
    assert results[4] == "ERROR: HTTP 404: no such invoice"
    assert results[5].startswith("ERROR:") and "limit" in results[5]
    assert "no answer within 1 s" in results[6]
    assert results[7].startswith("ERROR: invalid arguments") and "amount" in results[7]  # checked before sending
    modes = {c["name"]: c["mutating"] for c in record.tool_calls}
    assert modes["billing_createInvoice"] is True and modes["billing_getInvoice"] is False
    spec = {t["function"]["name"]: t["function"] for t in requests[0].body["tools"]}
    assert spec["billing_listInvoices"]["parameters"]["required"] == ["X-Tenant"]
    assert spec["billing_createInvoice"]["parameters"]["properties"]["body"]["required"] == ["customer", "amount"]


def test_a_wrong_secret_is_never_shown_to_the_model(scripted: Start, tmp_path: Path) -> None:
    with serve_billing() as (root, api):
        flow = billing_workflow(tmp_path, root)
        requests: list[ScriptedRequest] = []
        server = scripted(
            seen_by(requests, call("billing_getInvoice", {"id": "INV-1"})), seen_by(requests, reply("ok"))
        )
        store = LocalStore(tmp_path / "state")
        env = ToolEnv(secrets={"billing_token": "wrong-value-789"}.get)
        agent = build_agent(
            flow, model_for(server), Services(runs=RunStore(store), tool_env=env), files=StoreFileStore(store, "t")
        )
        record = agent.run("Check.")
    [result] = requests[1].tool_results().values()
    assert result.startswith("ERROR: HTTP 401") and "wrong-value-789" not in result and "***" in result
    assert "wrong-value-789" not in json.dumps(record.to_dict())
    assert api.requests[-1]["headers"]["Authorization"] == "Bearer wrong-value-789"  # it did go to the server


def test_a_missing_secret_names_the_tool_source(tmp_path: Path) -> None:
    with serve_billing() as (root, _):
        flow = billing_workflow(tmp_path, root)
        with ScriptedServer([]) as server, pytest.raises(SecretMissingError, match=r"billing.*'billing_token'"):
            build_agent(flow, model_for(server), Services(tool_env=ToolEnv(secrets=lambda name: None)))


def test_a_malformed_openapi_document_is_a_config_error_with_its_path(tmp_path: Path) -> None:
    spec = json.loads(json.dumps(BILLING_SPEC))
    spec["paths"]["/invoices"]["get"]["parameters"][0] = {"in": "query"}
    (tmp_path / "billing.json").write_text(json.dumps(spec))
    flow = workflow(tmp_path, {"openapi": [{"name": "billing", "spec": "billing.json", "base_url": "http://x"}]})
    with ScriptedServer([]) as server, pytest.raises(ConfigError, match=r"paths\./invoices\.get\.parameters\[0\]"):
        build_agent(flow, model_for(server), Services(tool_env=ToolEnv(secrets=SECRETS.get)))


def test_python_tools_come_from_the_tools_path(scripted: Start, tmp_path: Path) -> None:
    folder = tmp_path / "mytools"
    (folder / "acme_tools").mkdir(parents=True)
    (folder / "acme_tools" / "__init__.py").write_text("")
    (folder / "acme_tools" / "jira.py").write_text(
        "from agent_runtime import tool\n\n"
        "@tool\ndef find_duplicates(summary: str) -> list[str]:\n"
        '    """Find issues like this one.\n\n    Args:\n        summary: The summary.\n    """\n'
        "    return ['PROJ-9'] if 'timeout' in summary else []\n\n"
        "def plain(x: int) -> int:\n    return x\n"
    )
    flow = workflow(tmp_path, {"python": ["acme_tools.jira:find_duplicates"]})
    requests: list[ScriptedRequest] = []
    server = scripted(
        seen_by(requests, call("find_duplicates", {"summary": "timeout on login"})), seen_by(requests, reply("PROJ-9"))
    )
    record = agent_for(server, flow, tmp_path, tools_path=(str(folder),)).run("Duplicates?")
    assert record.status is RunStatus.COMPLETED
    assert next(iter(requests[1].tool_results().values())) == '["PROJ-9"]'
    with ScriptedServer([]) as other, pytest.raises(ConfigError, match="not a tool; decorate it with @tool"):
        agent_for(other, workflow(tmp_path, {"python": ["acme_tools.jira:plain"]}), tmp_path, tools_path=(str(folder),))
    with ScriptedServer([]) as other:  # a whole module: its @tool functions, not its plain ones
        whole = agent_for(other, workflow(tmp_path, {"python": ["acme_tools.jira"]}), tmp_path,
                          tools_path=(str(folder),))  # fmt: skip
        assert "find_duplicates" in whole.tools.names() and "plain" not in whole.tools.names()
    with ScriptedServer([]) as other, pytest.raises(ConfigError, match="the module has no @tool functions"):
        agent_for(other, workflow(tmp_path, {"python": ["acme_tools"]}), tmp_path, tools_path=(str(folder),))


def test_workflows_validate_checks_the_tools_section(tmp_path: Path) -> None:
    from tests.cli_support import run_cli

    folder = tmp_path / "workflows"
    folder.mkdir()
    base = {"description": "d", "prompt": "p", "model": {"name": "gpt-4o", "context_window": 128_000}}

    def write(name: str, tools: dict[str, Any]) -> None:
        (folder / f"{name}.yaml").write_text(yaml.safe_dump({"name": name, **base, "tools": tools}))

    with serve_mcp(crowded_server(80)) as url:
        write("keys", {"mcp": [{"name": "Bad Name", "url": "ftp://x", "allow": ["a"], "deny": ["b"]}], "rest": []})
        write("secret", {"mcp": [{"name": "crowded", "url": url, "headers": {"X-Key": "${secret:crowd_key}"}}]})
        write("crowded", {"mcp": [{"name": "crowded", "url": url}], "search": {"defer": {"crowded": "never"}}})
        write("whole", {"mcp": [{"name": "crowded", "url": url}]})  # 80 tools, deferred: found by tool_search
        write("gone", {"mcp": [{"name": "gone", "url": "http://127.0.0.1:9/mcp"}]})
        write("clash", {"python": ["agent_runtime.files.tools:file_read"]})
        write("good", {"mcp": [{"name": "crowded", "url": url, "allow": ["op_1"]}], "builtin": []})
        env = {"AGENT_WORKFLOWS_DIR": str(folder)}
        result = run_cli("workflows", "validate", env=env)
        offline = run_cli("workflows", "validate", "--offline", "gone", "crowded", "good", env=env)
    assert result.returncode == 2
    lines = result.stderr.splitlines()
    expected = [
        "keys.yaml: tools.rest: unknown key; allowed: mcp, openapi, python, builtin",
        "keys.yaml: tools.mcp[0].url: must be an http(s) URL, not 'ftp://x'",
        "keys.yaml: tools.mcp[0]: give 'allow' or 'deny', not both",
        "keys.yaml: tools.mcp[0].name: use 1-24 lowercase letters, digits or '_', starting with a letter",
        "secret.yaml: warning: tools: secret 'crowd_key' is not set (environment variable CROWD_KEY locally)",
        "crowded.yaml: tools.mcp 'crowded': the server lists 80 tools; name the ones",
        "gone.yaml: tools.mcp 'gone': MCP server 'gone' is unreachable",
        "clash.yaml: tools: two tools are named 'file_read'",
    ]
    for part in expected:
        assert any(part in line for line in lines), (part, lines)
    assert "ok  " in result.stdout and "good.yaml" in result.stdout and "whole.yaml" in result.stdout
    assert offline.returncode == 0, offline.stderr  # nothing reached: the sections themselves are valid


def test_build_agent_gives_your_own_tools_the_context_engine(scripted: Start) -> None:
    from agent_runtime import build_agent as exported
    from agent_runtime import load_workflow, tool

    @tool
    def export_logs(service: str) -> str:
        """Export a service's logs.

        Args:
            service: The service.
        """
        return "\n".join(f"{service} line {n}: request handled in {n % 97} ms" for n in range(4_000))

    requests: list[ScriptedRequest] = []
    server = scripted(seen_by(requests, call("export_logs", {"service": "api"})), seen_by(requests, reply("ok")))
    flow = load_workflow("document-feedback", Path(__file__).parents[2] / "workflows")
    record = exported(flow, model_for(server), tools=[export_logs]).run("Why is the api slow?")
    assert record.status is RunStatus.COMPLETED
    [result] = requests[1].tool_results().values()
    assert len(result) < 20_000 and "virtual file" in result  # ~150k characters went to a file, not the window
    assert "files (" in requests[1].status_text()


def test_a_stdio_mcp_server_runs_locally_and_is_refused_in_lambda(
    scripted: Start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    from tests.toolsets_support import STDIO_SERVER

    command = [sys.executable, "-c", STDIO_SERVER]
    flow = workflow(tmp_path, {"mcp": [{"name": "local", "command": command, "allow": ["search"]}]})
    requests: list[ScriptedRequest] = []
    server = scripted(seen_by(requests, call("local_search", {"query": "webhook"})), seen_by(requests, reply("ok")))
    monkeypatch.chdir(Path(__file__).parents[2])  # the child imports tests.toolsets_support
    record = agent_for(server, flow, tmp_path).run("Search.")
    assert record.status is RunStatus.COMPLETED
    assert "Webhook retries" in next(iter(requests[1].tool_results().values()))
    monkeypatch.setenv("AWS_LAMBDA_FUNCTION_NAME", "worker")
    with ScriptedServer([]) as other, pytest.raises(ConfigError, match=r"stdio servers .* run only locally"):
        agent_for(other, flow, tmp_path)


def test_mutating_calls_need_approval_and_a_denial_reaches_the_model(scripted: Start, tmp_path: Path) -> None:
    import io

    from agent_runtime.approvals.approvers import TerminalApprover

    created: list[str] = []
    with serve_mcp(notes_server(created=created)) as url:
        source = {"name": "notes", "url": url, "allow": ["search", "create_page"]}
        flow = workflow(tmp_path, {"mcp": [source], "approval_overrides": {"notes_search": "always"}})
        requests: list[ScriptedRequest] = []
        page = {"title": "Triage", "body": "x" * 500, "api_key": "k-123456"}
        server = scripted(
            seen_by(requests, call("notes_create_page", page)),
            seen_by(requests, call("notes_search", {"query": "webhook"})),
            seen_by(requests, reply("Not written: denied.")),
        )
        asked, answers = io.StringIO(), io.StringIO("n\ny\n")
        record = agent_for(server, flow, tmp_path, approver=TerminalApprover(asked, answers)).run("Write it down.")
    assert record.status is RunStatus.COMPLETED and created == []
    [denied] = requests[1].tool_results().values()
    assert denied.startswith("ERROR: not run: this notes_create_page call was denied by the terminal's user")
    assert "Webhook retries" in next(iter(requests[2].tool_results().values()))  # "always": asked, approved
    shown = asked.getvalue()
    assert "notes_create_page" in shown and '"api_key": "***"' in shown and "k-123456" not in shown
    assert "x" * 500 in shown  # the whole of what would run: nothing is approved unseen
    decided = [
        (e["tool"], e["decision"], e["by"]) for e in record.to_dict()["events"] if e["type"] == "approval_decided"
    ]
    assert decided == [
        ("notes_create_page", "denied", "the terminal's user"),
        ("notes_search", "approved", "the terminal's user"),
    ]
    with ScriptedServer([call("notes_create_page", {"title": "t", "body": "b"}), reply("ok")]) as other:
        record = build_agent(flow, model_for(other), Services(tool_env=ToolEnv(secrets=SECRETS.get))).run("Write.")
    assert any(e["type"] == "approval_decided" and e["decision"] == "denied" for e in record.to_dict()["events"])


HELPER_TOOLS = '''
from agent_runtime import tool

RESTARTED = []

@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"{key} = 42"

@tool(mutating=True)
def restart(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    RESTARTED.append(service)
    return "restarted"
'''


@pytest.mark.parametrize("approval", ["mutating", "never"])
def test_helpers_get_the_read_only_declared_tools(scripted: Start, tmp_path: Path, approval: str) -> None:
    """A helper runs inside one tool call with no checkpoint of its own and cannot wait for a decision: it gets
    the workflow's read-only declared tools (the parent's own objects and credentials), never a mutating one,
    even one that needs no approval (a resumed parent would run the helper, and the call, again)."""
    from agent_runtime.subagents import SubagentSettings

    (tmp_path / "helper_tools.py").write_text(HELPER_TOOLS)
    flow = workflow(tmp_path, {"python": ["helper_tools:lookup", "helper_tools:restart"], "approval": approval})
    flow = replace(flow, subagents=SubagentSettings(enabled=True))

    def helper(request: ScriptedRequest) -> Any:
        if not request.system_text().startswith("You are a helper agent"):
            return None
        assert "lookup" in request.tool_names and "restart" not in request.tool_names, request.tool_names
        results = request.tool_results()
        return reply(f"found: {next(iter(results.values()))}") if results else call("lookup", {"key": "limit"})

    server = scripted(call("subagent", {"task": "find the limit"}), reply("the limit is 42"), intercept=helper)
    agent = build_agent(flow, model_for(server), Services(tool_env=ToolEnv(tools_path=(str(tmp_path),))))
    assert {"lookup", "restart"} <= set(agent.tools.names())
    record = agent.run("What is the limit?")
    assert record.status is RunStatus.COMPLETED and record.final_answer == "the limit is 42"
    [child] = record.children
    assert child["final_answer"] == "found: limit = 42"
