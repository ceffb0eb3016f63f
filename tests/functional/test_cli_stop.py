"""Stop and Ctrl-C mean the same for a CLI run as for a deployed one (issue 50): the run is stored as it starts
(a row saying running, with its process), `runs stop` from another shell ends it at its next step (in its first
step too, a streamed call closed), Ctrl-C is that stop at once (one line, no traceback, exit 130, the thread goes
on), a second Ctrl-C quits there and then, and a run whose process is gone reads as interrupted until `runs stop`
closes it. The real CLI in subprocesses, against the scripted model over HTTP."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.testing import Paced, ScriptedRequest, ScriptedServer, call, reply

from tests.cli_support import REPO, run_cli

Start = Callable[..., ScriptedServer]
LONG = "The payments service is up and its queue drains. " * 120  # ~20 s to stream at 0.05 s a chunk
TOOLS = '''
import os
import time
from pathlib import Path
from agent_runtime import tool


def _slowly(service: str, done: str) -> str:
    gate = Path(os.environ["GATE"])
    (gate / f"started-{service}").touch()
    until = time.monotonic() + 15
    while not (gate / "release").exists() and time.monotonic() < until:  # the test says when it is done
        time.sleep(0.02)
    return f"{service}: {done}"


@tool
def slow_check(service: str) -> str:
    """Check a service; it takes a while.

    Args:
        service: Its name.
    """
    return _slowly(service, "up")


@tool(mutating=True)
def restart(service: str) -> str:
    """Restart a service; it takes a while.

    Args:
        service: Its name.
    """
    return _slowly(service, "restarted")


def two_checks(run):
    return run.call("slow_check", service="api") + " / " + run.call("slow_check", service="db")
'''
FLOW = """\
name: slow-checks
description: Checks services slowly.
prompt: You check services.
model: {{name: gpt-4o, context_window: 128000, max_output_tokens: 512}}
tools: {{python: [slow_tools:slow_check, slow_tools:restart]}}
{extra}"""


class Cli:
    """The CLI against one scripted server and one store, with the slow tool on its path."""

    def __init__(self, tmp_path: Path, server: ScriptedServer, *, script: bool = False) -> None:
        self.gate, self.state = tmp_path / "gate", tmp_path / "state"
        self.gate.mkdir()
        (tmp_path / "tools").mkdir()
        (tmp_path / "tools" / "slow_tools.py").write_text(TOOLS)
        self.flow = tmp_path / "slow-checks.yaml"
        scripted = "coordinator: script\nscript: slow_tools:two_checks\n"
        self.flow.write_text(FLOW.format(extra=scripted if script else ""))
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
        self.env = clean | {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(self.state),
                            "AGENT_SANDBOX": "off", "AGENT_TOOLS_PATH": str(tmp_path / "tools"),
                            "GATE": str(self.gate)}  # fmt: skip

    def start(self, *args: str) -> subprocess.Popen[str]:
        command = [sys.executable, "-m", "agent_runtime", "run", str(self.flow), "-q", *args]
        return subprocess.Popen(command, env=self.env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)  # fmt: skip

    def __call__(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, env=self.env)

    def wait_for(self, name: str) -> None:
        until = time.monotonic() + 30
        while not (self.gate / name).exists():
            assert time.monotonic() < until, f"{name} never came"
            time.sleep(0.02)

    def release(self) -> None:
        (self.gate / "release").touch()

    def listed(self) -> dict[str, str]:
        """`runs list --json`: each run's status as the CLI shows it."""
        listed = self("runs", "list", "--json")
        assert listed.returncode == 0, listed.stderr
        return {row["run_id"]: row["status"] for row in json.loads(listed.stdout)}

    def working(self) -> str:
        """The run at work, read from the store (the CLI's listing of it is tested once, not at every step)."""
        [row] = RunStore(LocalStore(self.state)).list_runs()
        assert row.status == "running"
        return str(row.run_id)

    def runs(self) -> list[str]:
        return [str(row.run_id) for row in RunStore(LocalStore(self.state)).list_runs()]

    def record(self, run_id: str) -> dict[str, Any]:
        return RunStore(LocalStore(self.state)).load_record(run_id) or {}


def ended(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    out, err = process.communicate(timeout=60)
    return process.returncode, out, err


def test_runs_stop_from_another_shell_ends_a_cli_run_in_its_first_step(scripted: Start, tmp_path: Path) -> None:
    """Was: `no stored run` (the run was stored only at its end), then "it ends at its next step" and the run
    went on to its answer, exit 0."""
    seen: dict[str, Any] = {}

    def stop_while_streaming(request: ScriptedRequest) -> Paced:
        seen["listed"] = cli.listed()  # the run is there while it works, saying so
        seen["show"] = cli("runs", "show", next(iter(seen["listed"])))  # no record yet: it says why
        seen["stop"] = cli("runs", "stop", next(iter(seen["listed"])))
        return Paced(reply(LONG), interval=0.05)

    server = scripted(stop_while_streaming)
    cli = Cli(tmp_path, server)
    code, out, err = ended(cli.start("-m", "is payments up?"))
    [(run_id, status)] = seen["listed"].items()
    assert status == "running" and "is still running: its record is stored when it ends" in seen["show"].stderr
    assert seen["stop"].returncode == 0 and "it ends at its next step" in seen["stop"].stdout
    assert code == 6 and out == "" and "Traceback" not in err  # 6: stopped (docs/slack-and-jira.md)
    assert "run stopped: Stopped by local:" in err
    assert len(server.requests) == 1 and server.abandoned == [0]  # the streamed call closed, none after it
    record = cli.record(run_id)
    assert record["status"] == "stopped" and record["stop_reason"].startswith("Stopped by local:")
    again = cli("runs", "stop", run_id)  # a finished run says so
    assert again.returncode == 1 and "has ended (stopped): nothing to stop" in again.stderr


@pytest.mark.parametrize("script", [False, True], ids=["model-driven", "script-driven"])
def test_runs_stop_during_a_slow_tool_call_ends_the_run_before_its_next_step(
    scripted: Start, tmp_path: Path, script: bool
) -> None:
    """The tool call under way finishes; no model call (nor a script's next tool call) comes after the stop."""
    server = scripted() if script else scripted(call("slow_check", {"service": "api"}))
    cli = Cli(tmp_path, server, script=script)
    run = cli.start("-m", "check api")
    cli.wait_for("started-api")
    run_id = cli.working()
    asked = cli("runs", "stop", run_id)
    assert asked.returncode == 0 and "it ends at its next step" in asked.stdout
    cli.release()
    code, _, err = ended(run)
    assert code == 6 and "Traceback" not in err, err
    assert not (cli.gate / "started-db").exists()  # the script's next call never ran
    record = cli.record(run_id)
    assert record["status"] == "stopped" and [c["name"] for c in record["tool_calls"]] == ["slow_check"]
    assert len(server.requests) == (0 if script else 1)


def test_ctrl_c_mid_tool_call_stops_the_run_and_its_thread_goes_on(scripted: Start, tmp_path: Path) -> None:
    """Was: a traceback ending in KeyboardInterrupt, and the run listed as running for ever."""

    def answer(request: ScriptedRequest) -> Any:
        return reply(f"kept: {'api: up' in json.dumps(request.messages)}")

    server = scripted(call("slow_check", {"service": "api"}), answer)
    cli = Cli(tmp_path, server)
    run = cli.start("-t", "T-9", "-m", "check api")
    cli.wait_for("started-api")
    run_id = cli.working()
    run.send_signal(signal.SIGINT)
    time.sleep(0.3)  # the stop is asked at once; the tool call under way ends first
    cli.release()
    code, out, err = ended(run)
    assert code == 130 and out == "" and "Traceback" not in err, err
    assert err.strip().splitlines() == [err.strip()] and "Ctrl-C" in err  # one line
    record = cli.record(run_id)
    assert record["status"] == "stopped" and record["stop_reason"].startswith("Stopped by Ctrl-C (local:")
    assert len(server.requests) == 1  # no model call after the stop
    second = cli("run", str(cli.flow), "-q", "-t", "T-9", "-m", "and now?")
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "kept: True"  # the stopped turn's tool result is in the thread


def test_ctrl_c_mid_stream_closes_the_call_and_the_thread_goes_on(scripted: Start, tmp_path: Path) -> None:
    streaming = threading.Event()

    def slow(request: ScriptedRequest) -> Paced:
        streaming.set()
        return Paced(reply(LONG), interval=0.05)

    def answer(request: ScriptedRequest) -> Any:
        return reply(f"asked before: {'is payments up?' in json.dumps(request.messages)}")

    server = scripted(slow, answer)
    cli = Cli(tmp_path, server)
    run = cli.start("-t", "T-10", "-m", "is payments up?")
    assert streaming.wait(30)
    run.send_signal(signal.SIGINT)
    code, out, err = ended(run)
    assert code == 130 and out == "" and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert server.abandoned == [0]  # closed part way
    [run_id] = cli.runs()
    assert cli.listed() == {run_id: "stopped"}  # what `runs list` shows
    assert "Ctrl-C" in cli.record(run_id)["stop_reason"]
    second = cli("run", str(cli.flow), "-q", "-t", "T-10", "-m", "and now?")
    assert (second.returncode, second.stdout.strip()) == (0, "asked before: True"), second.stderr


def test_a_killed_run_reads_interrupted_and_runs_stop_closes_it(scripted: Start, tmp_path: Path) -> None:
    """Was: `running` for ever, and `runs stop` answered "it ends at its next step"."""
    cli = Cli(tmp_path, scripted(call("slow_check", {"service": "api"})))
    run = cli.start("-m", "check api")
    cli.wait_for("started-api")  # the tool waits for a release that never comes
    run_id = cli.working()
    run.kill()
    run.wait(30)
    assert cli.listed() == {run_id: "interrupted"}
    closed = cli("runs", "stop", run_id)
    assert closed.returncode == 0 and "was not running: its process" in closed.stdout, closed.stderr
    assert "closed it as stopped" in closed.stdout
    record = cli.record(run_id)
    assert record["status"] == "stopped" and record["stop_reason"].startswith("Interrupted: its process (pid ")
    assert RunStore(LocalStore(cli.state)).list_runs()[0].status == "stopped"  # no longer running


def test_a_second_ctrl_c_quits_at_once_and_the_thread_goes_on_from_its_last_step(
    scripted: Start, tmp_path: Path
) -> None:
    """Mid mutating call: the next turn is told its outcome is unknown (was: "tool call has no result", for good)."""

    def answer(request: ScriptedRequest) -> Any:
        return reply(f"told: {'outcome of this restart call is unknown' in json.dumps(request.messages)}")

    server = scripted(call("restart", {"service": "api"}), answer)
    cli = Cli(tmp_path, server)
    run = cli.start("-t", "T-11", "--approve", "all", "-m", "restart api")
    cli.wait_for("started-api")  # the tool waits for a release that never comes
    run.send_signal(signal.SIGINT)
    time.sleep(0.3)  # two presses, not one signal delivered twice
    run.send_signal(signal.SIGINT)
    code, _, err = ended(run)
    assert code == 130 and "Traceback" not in err and "quit mid-step" in err, err
    [run_id] = cli.runs()
    assert cli.listed() == {run_id: "interrupted"}
    second = cli("run", str(cli.flow), "-q", "-t", "T-11", "--approve", "all", "-m", "and?")
    assert (second.returncode, second.stdout.strip()) == (0, "told: True"), second.stderr
