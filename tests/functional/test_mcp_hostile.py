"""What one MCP server lists costs only that server, or that one tool (issue 31, points 7-8): the run goes on
with the rest, and the prompt says what is missing and why. Servers: hand-written MCP over streamable HTTP
(tests/toolsets_support.py), saying what hostile or broken servers say."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_runtime import RunStatus
from agent_runtime.testing import ScriptedRequest, ScriptedServer, reply

from tests.toolsets_support import notes_server, serve_mcp, serve_raw_mcp
from tests.workflow_tools_support import agent_for, seen_by, workflow

Start = Callable[..., ScriptedServer]


def plain(name: str, description: str = "A tool.", schema: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"name": name, "description": description, "inputSchema": schema or {"type": "object", "properties": {}}}


def nested(depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"x": schema}}
    return schema


def run_with(scripted: Start, tmp_path: Path, raw_url: str) -> tuple[Any, str]:
    """A run with the hostile server beside a good one: it completes, and says what the prompt said."""
    with serve_mcp(notes_server()) as good:
        flow = workflow(tmp_path, {"mcp": [{"name": "hostile", "url": raw_url},
                                           {"name": "notes", "url": good, "allow": ["search"]}]})  # fmt: skip
        requests: list[ScriptedRequest] = []
        server = scripted(seen_by(requests, reply("Answered.")))
        record = agent_for(server, flow, tmp_path).run("Go.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert "notes_search" in requests[0].tool_names  # the good server's tools are there
    return requests[0], requests[0].system_text()


def test_names_and_schemas_no_model_can_take_cost_only_their_tool(scripted: Start, tmp_path: Path) -> None:
    listing = {"result": {"tools": [
        plain("ok"),
        plain("x" * 70),  # over Chat Completions' 64 characters with the prefix
        plain("a.b"), plain("a_b"),  # two names that clean to one
        plain("wordy", description="w" * 3_000_000),  # a 3 MB description
        plain("deep", schema=nested(60)),
    ]}}  # fmt: skip
    with serve_raw_mcp(lambda cursor: listing) as url:
        request, said = run_with(scripted, tmp_path, url)
    assert {"hostile_ok", "hostile_a_b", "hostile_wordy"} <= set(request.tool_names)
    assert not {"hostile_deep"} & set(request.tool_names) and not any(len(n) > 64 for n in request.tool_names)
    [wordy] = [t for t in request.body["tools"] if t["function"]["name"] == "hostile_wordy"]
    assert len(wordy["function"]["description"]) < 5_000
    assert "Some tools of the MCP server 'hostile' are left out" in said
    assert "over Chat Completions' 64 characters" in said and "cleans to 'hostile_a_b'" in said
    assert "'deep': its input schema is nested too deep" in said


def test_a_listing_error_or_a_hostile_listing_costs_only_that_server(scripted: Start, tmp_path: Path) -> None:
    for listing in (
        lambda cursor: {"error": {"code": -32603, "message": "internal error: index rebuilding"}},
        lambda cursor: {"result": {"tools": [plain("abyss", schema=nested(5_000))]}},  # beyond any parser
    ):
        with serve_raw_mcp(listing) as url:
            request, said = run_with(scripted, tmp_path, url)
        assert not [name for name in request.tool_names if name.startswith("hostile_")]
        assert "Tools of the MCP server 'hostile' are unavailable in this run" in said


def test_an_endless_paginated_listing_stops(scripted: Start, tmp_path: Path) -> None:
    """Was: a cursor that never ended was followed until memory ran out."""
    pages: list[str | None] = []

    def endless(cursor: str | None) -> dict[str, Any]:
        pages.append(cursor)
        return {
            "result": {"tools": [plain(f"t{len(pages)}")] if len(pages) < 3 else [], "nextCursor": f"c{len(pages)}"}
        }

    with serve_raw_mcp(endless) as url:
        flow = workflow(tmp_path, {"mcp": [{"name": "hostile", "url": url, "allow": ["t1", "t2"]}]})
        server = scripted(reply("Answered."))
        record = agent_for(server, flow, tmp_path).run("Go.")
    assert record.status is RunStatus.COMPLETED
    assert len(pages) == 100  # MAX_PAGES


def test_a_stdio_server_that_never_handshakes_costs_its_tools_and_its_process_ends(
    scripted: Start, tmp_path: Path, monkeypatch: Any
) -> None:
    """Was: the run failed, and the silent process was left running."""
    import os
    import sys
    import time

    from agent_runtime.toolsets import mcp

    monkeypatch.setattr(mcp, "CONNECT_TIMEOUT", 1.0)
    pid_file = tmp_path / "pid"
    silent = [sys.executable, "-c", f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
              "time.sleep(600)"]  # fmt: skip
    flow = workflow(tmp_path, {"mcp": [{"name": "silent", "command": silent}]})
    requests: list[ScriptedRequest] = []
    server = scripted(seen_by(requests, reply("Answered without it.")))
    started = time.monotonic()
    record = agent_for(server, flow, tmp_path).run("Go.")
    assert record.status is RunStatus.COMPLETED and time.monotonic() - started < 15
    assert "Tools of the MCP server 'silent' are unavailable in this run" in requests[0].system_text()
    pid = int(pid_file.read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return  # gone
        if Path(f"/proc/{pid}/status").exists() and "zombie" in Path(f"/proc/{pid}/status").read_text():
            return  # ended, not yet reaped
        time.sleep(0.1)
    raise AssertionError("the silent server's process was left running")


def test_a_stdio_server_never_outlives_the_process_that_started_it(tmp_path: Path) -> None:
    """Issue 41, point 13: the handshake's task was cancelled but not awaited, so a CLI that exited right after
    left the server running (in its own session, nothing ended it). Now the cancel is awaited, bounded, and the
    sessions close at exit."""
    import subprocess
    import sys
    import time

    pid_file = tmp_path / "pid"
    silent = [sys.executable, "-c", f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); "
              "time.sleep(600)"]  # fmt: skip
    script = f"""
from agent_runtime.toolsets import mcp
mcp.CONNECT_TIMEOUT = 1.0
from agent_runtime.toolsets import ToolEnv, validate_tools
from agent_runtime.workflows import parse_workflow
flow = parse_workflow({{"name": "w", "description": "d", "prompt": "p", "tools": {{"mcp": [{{"name": "silent",
                       "command": {silent!r}}}]}}, "model": {{"name": "gpt-4.1", "context_window": 8192}}}},
                      file="w.yaml")
print(validate_tools(flow, ToolEnv(), []).errors)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "silent" in done.stdout, done.stderr[-800:]
    pid = int(pid_file.read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" in status.read_text(), "the server outlived the process that started it"
