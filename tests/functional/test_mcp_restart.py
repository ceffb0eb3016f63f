"""A restarted MCP server is reconnected on the next call (issue 31, point 11), with real servers: the
third-party ``mcp-server-time`` from PyPI over stdio (killed between two calls), and the ``mcp`` SDK's own server
over streamable HTTP (restarted at the same address). Was: "Session not found" (HTTP) and "Connection closed"
(stdio) for every later call of the process: on a warm Lambda, until the environment was recycled."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path
from urllib.parse import urlsplit

from agent_runtime import RunStatus
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply

from tests.toolsets_support import notes_server, serve_mcp
from tests.workflow_tools_support import agent_for, seen_by, workflow

Start = Callable[..., ScriptedServer]


def results(request: ScriptedRequest) -> list[str]:
    return list(request.tool_results().values())


def test_a_killed_stdio_server_is_started_again_on_the_next_call(scripted: Start, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    wrapper = tmp_path / "time_server.py"  # records its pid, then becomes the server (same process)
    wrapper.write_text(
        f"import os, sys\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'mcp_server_time', '--local-timezone', 'UTC'])\n"
    )
    source = {"name": "time", "command": [sys.executable, str(wrapper)], "allow": ["get_current_time"],
              "read_only": ["get_current_time"]}  # fmt: skip
    flow = workflow(tmp_path, {"mcp": [source]})
    requests: list[ScriptedRequest] = []
    first_pid: list[str] = []

    def kill_then_call(request: ScriptedRequest) -> object:
        requests.append(request)
        first_pid.append(pid_file.read_text())
        os.kill(int(first_pid[0]), signal.SIGKILL)  # the server dies between two calls
        time.sleep(0.3)
        return call("time_get_current_time", {"timezone": "UTC"})

    server = scripted(
        call("time_get_current_time", {"timezone": "UTC"}),
        kill_then_call,
        seen_by(requests, reply("It is late.")),
    )
    record = agent_for(server, flow, tmp_path).run("What time is it?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    first, second = results(requests[0])[0], results(requests[1])[0]
    assert '"timezone": "UTC"' in first and '"timezone": "UTC"' in second, second
    assert pid_file.read_text() != first_pid[0]  # a new process


def test_a_restarted_http_server_gets_a_new_session_on_the_next_call(scripted: Start, tmp_path: Path) -> None:
    """Read-only and mutating calls alike: a 404 on the old session means the server never ran the call."""
    requests: list[ScriptedRequest] = []
    running = [ExitStack()]
    url = running[0].enter_context(serve_mcp(notes_server()))
    port = urlsplit(url).port or 0
    flow = workflow(tmp_path, {"mcp": [{"name": "notes", "url": url, "allow": ["search", "create_page"]}]})

    def restart_then(step: object) -> Callable[[ScriptedRequest], object]:
        def respond(request: ScriptedRequest) -> object:
            requests.append(request)
            running[-1].close()  # the server restarts at the same address: it knows no session
            running.append(ExitStack())
            running[-1].enter_context(serve_mcp(notes_server(), port))
            return step

        return respond

    server = scripted(
        call("notes_search", {"query": "retries"}),
        restart_then(call("notes_search", {"query": "retries"})),
        restart_then(call("notes_create_page", {"title": "T", "body": "b"})),
        seen_by(requests, reply("Done.")),
    )
    try:
        record = agent_for(server, flow, tmp_path).run("Find the retries note, again, and write a page.")
    finally:
        running[-1].close()
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    before, after, created = (results(r)[0] for r in requests)
    assert "Webhook retries" in before and "Webhook retries" in after  # the same call, on a new session
    assert created == "created page 'T'"


def test_a_stdio_server_that_cannot_start_is_explained_in_its_own_words(scripted: Start, tmp_path: Path) -> None:
    """Was: its stderr (the only place saying why) went to the terminal, not to the run: the prompt and
    `workflows validate` said only "Connection closed"."""
    failing = [sys.executable, "-c", "import sys; sys.stderr.write('config /etc/notes.toml not found'); sys.exit(3)"]
    flow = workflow(tmp_path, {"mcp": [{"name": "broken", "command": failing}]})
    requests: list[ScriptedRequest] = []
    server = scripted(seen_by(requests, reply("Answered without it.")))
    record = agent_for(server, flow, tmp_path).run("Go.")
    assert record.status is RunStatus.COMPLETED
    assert "it said: config /etc/notes.toml not found" in requests[0].system_text()
