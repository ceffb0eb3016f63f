"""What the demo model says a call it made did. A mutating tool that ran and raised was reported "restart_service
did not run: … CalledProcessError" (false: it ran, and failed), and "go on" after a Stop whose call had finished
was answered "Done: (no result)" although the tool had returned its result. The promises, over drawn tools,
errors and results, through the demo model over HTTP and the CLI: a call that raised is said to have failed, with
the error's one line; "did not run" only for a call denied or never called; the answer after a resume names the
finished call's result."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.runtime import build_agent
from agent_runtime.stopping import StopRequest
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.assistant import RUNTIME_TOOLS
from agent_runtime.testing.demo import demo_script
from agent_runtime.tools.decorator import external_tool
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.conftest import make_workflow, model_for

TOOL = st.from_regex(r"[a-z]{3,8}_[a-z]{3,8}", fullmatch=True).filter(lambda n: n not in RUNTIME_TOOLS)
KEY = st.from_regex(r"[A-Z]{2,5}-[1-9][0-9]{0,4}", fullmatch=True)
LINE = st.text(st.characters(min_codepoint=32, max_codepoint=126), min_size=1, max_size=60).map(str.strip)
ERRORS = st.sampled_from([RuntimeError, ValueError, KeyError, PermissionError, TimeoutError, OSError])
SCHEMA = {"properties": {"target": {"type": "string"}}, "required": ["target"]}


def _ask(tool: Any, message: str, **run: Any) -> Any:
    with ScriptedServer(demo_script(), model="demo") as server:
        agent = build_agent(make_workflow(), model_for(server), tools=[tool])
        first = agent.run(message, **run)
        if first.status.value != "stopped":
            return first, None
        return first, agent.run("go on", state=first.state)


@settings(max_examples=15, deadline=None)
@given(tool=TOOL, key=KEY, error=ERRORS, first=LINE, more=st.lists(LINE, max_size=2))
def test_a_tool_that_raised_is_said_to_have_failed_with_its_errors_one_line(
    tool: str, key: str, error: type[Exception], first: str, more: list[str]
) -> None:
    said = "\n".join([first, *more])

    def raises(_args: dict[str, Any], _ctx: Any) -> Any:
        raise error(said)

    record, _ = _ask(external_tool(tool, "Acts on one.", SCHEMA, raises, mutating=True), f"{tool} on {key}")
    answer = record.final_answer or ""
    assert answer.startswith(f"{tool} failed: {error.__name__}: "), answer
    assert "did not run" not in answer and "\n" not in answer.strip(), answer
    assert str(error(said)).splitlines()[0].strip().rstrip(".")[:40] in answer, (said, answer)


@settings(max_examples=10, deadline=None)
@given(tool=TOOL, key=KEY, result=LINE.filter(lambda s: s and not s.startswith("ERROR")))
def test_go_on_after_a_stop_whose_call_finished_names_the_calls_result(tool: str, key: str, result: str) -> None:
    ran: list[dict[str, Any]] = []

    def stop() -> StopRequest | None:  # pressed once the call ran, before the model is asked again
        return StopRequest("U0DANA", 1.0, "slack") if ran else None

    made = external_tool(tool, "Counts.", SCHEMA, lambda args, _ctx: ran.append(args) or result)
    first, resumed = _ask(made, f"{tool} on {key}", stop=stop)
    assert first.status.value == "stopped" and resumed is not None
    assert resumed.final_answer == f"Done: {result}", resumed.final_answer


TOOLS = '''\
import subprocess

from agent_runtime import tool


@tool(mutating=True)
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: The service's name.
    """
    subprocess.run(["false"], check=True)
    return f"restarted {service}"
'''
WORKFLOW = """\
name: ops
description: Operations.
prompt: You help operate the services.
model: {name: gpt-4.1-mini, context_window: 1047576}
tools:
  python: [ops_tools:restart_service]
  approvers: [requester]
"""


@pytest.mark.parametrize("approve", ["all", "none"])
def test_the_cli_says_a_restart_that_raised_failed_and_a_denied_one_did_not_run(tmp_path: Path, approve: str) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "ops_tools.py").write_text(TOOLS)
    (tmp_path / "ops.yaml").write_text(WORKFLOW)
    env = {"AGENT_TOOLS_PATH": str(tmp_path / "tools"), "AGENT_STATE_DIR": str(tmp_path / "state")}
    message = "restart_service for payments-api"
    result = run_cli("run", str(tmp_path / "ops.yaml"), "-q", "-m", message, "--approve", approve, env=env)
    assert result.returncode == 0, result.stderr
    if approve == "all":
        assert result.stdout.startswith("restart_service failed: CalledProcessError: "), result.stdout
        assert "did not run" not in result.stdout and subprocess.CalledProcessError.__name__ in result.stdout
    else:
        assert result.stdout.startswith("restart_service did not run:") and "denied" in result.stdout
