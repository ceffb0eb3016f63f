"""Runs built at once (serve's lanes, a worker's helpers) share one session per MCP server as declared: never two
opened for the same server and secrets, whichever build gets there first."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.toolsets import build, mcp
from agent_runtime.toolsets.build import ToolEnv, close_sessions, declared_tools

from tests.toolsets_support import notes_server, serve_mcp
from tests.workflow_tools_support import workflow


def test_builds_at_once_open_one_session_per_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    opened, made = mcp.McpSession.__init__, []

    def slowly(self: mcp.McpSession, *args: Any) -> None:  # a session that takes a moment to make: the race shows
        time.sleep(0.05)
        opened(self, *args)
        made.append(self)

    monkeypatch.setattr(mcp.McpSession, "__init__", slowly)
    with serve_mcp(notes_server()) as url:
        flow = workflow(tmp_path, {"mcp": [{"name": "notes", "url": url, "read_only": ["search", "fetch"]}]})
        close_sessions()
        built: list[list[str]] = []
        start = threading.Barrier(6)

        def build_once() -> None:
            start.wait()
            built.append(sorted(t.name for t in declared_tools(flow, ToolEnv()).tools))

        threads = [threading.Thread(target=build_once) for _ in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        try:
            assert len(built) == 6 and all(names == built[0] and names for names in built), built
            assert len(made) == 1 and list(build._SESSIONS.values()) == made  # none opened and left behind
        finally:
            close_sessions(wait=1.0)
