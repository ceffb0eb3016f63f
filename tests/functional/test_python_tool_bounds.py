"""A declared Python tool costs only itself (issue 31, point 10): ``sys.exit()`` inside it (argparse, click) and
a call that never returns are answered as tool errors; the run, the worker and ``serve`` go on."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import pytest
from agent_runtime import Deadline, RunStatus, Services
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.toolsets import ToolEnv

from tests.conftest import model_for
from tests.workflow_tools_support import workflow

Start = Callable[..., ScriptedServer]
TOOLS = '''
import sys
import time
from agent_runtime import tool

@tool
def report(service: str) -> str:
    """A report from a command-line program's main().

    Args:
        service: Its name.
    """
    sys.exit(2)  # what argparse does on a bad flag

@tool
def wait_forever(service: str) -> str:
    """Never answers.

    Args:
        service: Its name.
    """
    time.sleep(3600)
    return "never"
'''


def agent(server: ScriptedServer, tmp_path: Path, tool: str):  # type: ignore[no-untyped-def]
    (tmp_path / "bounded_tools.py").write_text(TOOLS)
    flow = workflow(tmp_path, {"python": [f"bounded_tools:{tool}"], "approval": "never"})
    return build_agent(flow, model_for(server), Services(tool_env=ToolEnv(tools_path=(str(tmp_path),))))


def test_a_tool_that_calls_sys_exit_is_a_tool_error_and_the_run_goes_on(scripted: Start, tmp_path: Path) -> None:
    def answer(request: ScriptedRequest):  # type: ignore[no-untyped-def]
        return reply(next(iter(request.tool_results().values())))

    server = scripted(call("report", {"service": "web"}), answer)
    record = agent(server, tmp_path, "report").run("Report on web.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert record.final_answer == "ERROR: tool 'report' exited (sys.exit(2)) before returning a result"


@pytest.mark.timed
def test_a_tool_that_never_returns_is_bounded_by_the_runs_deadline(scripted: Start, tmp_path: Path) -> None:
    """Was: a hanging Python tool held the invocation past its deadline (MCP and OpenAPI have timeouts)."""
    server = scripted(call("wait_forever", {"service": "web"}))
    started = time.monotonic()
    record = agent(server, tmp_path, "wait_forever").run("Go.", deadline=Deadline.after(2.0))
    assert time.monotonic() - started < 5
    assert record.status is RunStatus.SUSPENDED  # the deadline came: the run is checkpointed, not lost
    [result] = [m for m in record.state.messages if m["role"] == "tool"]  # type: ignore[union-attr]
    assert "did not finish within 2 s" in result["content"] and "its effect is unknown" in result["content"]
