"""Ctrl-C stops ``agent-runtime serve`` promptly whatever it is doing: idle with the page's long poll open, a model
answer streaming, two slow tool calls under way side by side (a thread pool), the sandbox's process starting. A
run under way is not waited for (the store says interrupted; the next start resumes it: test_serve_failures.py).

The real CLI in a subprocess, the scripted model over HTTP, the playground's page for the mention; each case
measures SIGINT to the process's end against one bound (the promise is about two seconds: STOPPING_SECONDS of
close, then the process ends; the bound leaves room for a busy machine, never for a join of what is under way)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.testing import ScriptedServer, call, calls
from agent_runtime.testing.steps import Paced, Reply

from tests.conftest import REPO
from tests.playground_support import HELPER, act, page_token, until

BOUND = 5.0  # seconds from SIGINT to the process's end (what was under way took 20 s and more)
SLOW_TOOLS = '''
import os
import time
from pathlib import Path
from agent_runtime import tool


@tool
def slow_check(service: str) -> str:
    """Check a service; it takes a while.

    Args:
        service: Its name.
    """
    (Path(os.environ["GATE"]) / f"started-{service}").touch()
    time.sleep(30)
    return f"{service}: up"
'''
EXTRA = {
    "tools": "tools: {python: [slow_tools:slow_check]}\n",
    "sandbox": "sandbox: {enabled: true}\n",
}


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., tuple[subprocess.Popen[str], str]]]:
    """``agent-runtime serve`` in a process of its own, on the helper workflow (``extra``: more of its keys);
    killed at the end if a case left it running."""
    started: list[subprocess.Popen[str]] = []

    def start(model: ScriptedServer, extra: str = "", sandbox: str = "off") -> tuple[subprocess.Popen[str], str]:
        (tmp_path / "workflows").mkdir(exist_ok=True)
        (tmp_path / "workflows" / "helper.yaml").write_text(HELPER + extra)
        (tmp_path / "lib").mkdir(exist_ok=True)
        (tmp_path / "lib" / "slow_tools.py").write_text(SLOW_TOOLS)
        (tmp_path / "gate").mkdir(exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SLACK_", "JIRA_"))}
        env |= {"AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_WORKFLOWS_DIR": str(tmp_path / "workflows")}
        env |= {"AGENT_SANDBOX": sandbox, "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test"}
        env |= {"GATE": str(tmp_path / "gate"), "AGENT_SANDBOX_DIR": str(REPO / "functions" / "sandbox")}
        env["PYTHONPATH"] = os.pathsep.join([str(tmp_path / "lib"), *filter(None, [env.get("PYTHONPATH")])])
        process = subprocess.Popen([sys.executable, "-m", "agent_runtime", "serve", "--port", "0"], env=env,
                                   stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=REPO)  # fmt: skip
        started.append(process)
        assert process.stderr is not None
        said = ""
        while "Ctrl-C stops" not in said and process.poll() is None:
            said += process.stderr.readline()
        return process, re.findall(r"open (http://127\.0\.0\.1:\d+)/ in a browser", said)[0]

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait()


def _stopping(process: subprocess.Popen[str]) -> float:
    """Seconds from Ctrl-C to the process's end; what it said as it stopped (never a traceback) is checked."""
    began = time.monotonic()
    process.send_signal(signal.SIGINT)
    try:
        process.wait(BOUND * 3)
    except subprocess.TimeoutExpired:
        return float("inf")
    took = time.monotonic() - began
    print(f"stopped in {took:.2f} s")
    assert process.stderr is not None
    said = process.stderr.read()
    assert process.returncode == 0 and "Traceback" not in said.split("stopping")[-1], said[-2000:]
    return took


def _mention(folder: Path, url: str, model: ScriptedServer) -> str:
    """The mention sent from the page; returns once its run is stored as running and the model was asked."""
    act(url, "message", {"channel": "C0HELP", "text": "@agent what changed?"}, page_token(url))
    runs = RunStore(LocalStore(folder / "state"))
    [row] = until(lambda: runs.list_runs(status="running"), what="the run listed running")
    until(lambda: len(model.requests) >= 1, what="the model asked")
    return row.run_id


@pytest.mark.timed
def test_ctrl_c_stops_an_idle_serve_while_the_page_waits_for_changes(serve: Callable[..., tuple]) -> None:
    with ScriptedServer([]) as model:
        process, url = serve(model)
        with urllib.request.urlopen(f"{url}/play/ui/changes?after=-1", timeout=10) as response:
            version = json.loads(response.read())["version"]
        polled = threading.Thread(target=_poll, args=(f"{url}/play/ui/changes?after={version}",), daemon=True)
        polled.start()
        time.sleep(0.5)  # the long poll is at the server, waiting (10 s) for a change
        assert polled.is_alive()
        assert _stopping(process) < BOUND


def _poll(address: str) -> None:
    with contextlib.suppress(OSError):  # the server went away under it: that is the point
        urllib.request.urlopen(address, timeout=30).read()


@pytest.mark.timed
def test_ctrl_c_stops_serve_while_an_answer_streams(serve: Callable[..., tuple], tmp_path: Path) -> None:
    slow = Paced(Reply(text=" ".join(f"word{n}" for n in range(500))), interval=0.05)  # 25 s of answer
    with ScriptedServer([slow]) as model:
        process, url = serve(model)
        _mention(tmp_path, url, model)
        time.sleep(1.0)  # words are arriving
        assert _stopping(process) < BOUND


@pytest.mark.timed
def test_ctrl_c_stops_serve_while_slow_tool_calls_run_side_by_side(serve: Callable[..., tuple], tmp_path: Path) -> None:
    both = calls(("slow_check", {"service": "api"}), ("slow_check", {"service": "db"}))  # a thread pool's pair
    with ScriptedServer([both]) as model:
        process, url = serve(model, EXTRA["tools"])
        _mention(tmp_path, url, model)
        until(lambda: len(list((tmp_path / "gate").glob("started-*"))) == 2, what="both calls under way")
        assert _stopping(process) < BOUND


@pytest.mark.timed
def test_ctrl_c_stops_serve_while_the_sandbox_starts_and_runs_and_leaves_no_sandbox_behind(
    serve: Callable[..., tuple], tmp_path: Path
) -> None:
    code = call("python", {"code": "while True: pass"})  # its 30 s: serve's close once waited for them
    with ScriptedServer([code]) as model:
        process, url = serve(model, EXTRA["sandbox"], sandbox="local")
        _mention(tmp_path, url, model)
        [node] = until(lambda: _children(process.pid), what="the sandbox's process")
        assert _stopping(process) < BOUND
        until(lambda: not _alive(node), timeout=10, what="the sandbox's process gone with serve")


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended (whoever adopted it has not reaped it yet)


ANOTHER_THREAD = """
import signal, threading, time
from agent_runtime.cli.serve import _until_interrupted

sleeper = threading.Thread(target=time.sleep, args=(30,), daemon=True)
sleeper.start()
threading.Timer(0.3, signal.pthread_kill, args=(sleeper.ident, signal.SIGINT)).start()
try:
    _until_interrupted()
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_ctrl_c_another_thread_took_still_ends_serves_wait() -> None:
    """The kernel may hand a process's SIGINT to any of its threads: Python's handler then waits for the main
    thread to run, and serve's wait once never let it (an untimed wait no signal woke), so serve sat deaf to
    Ctrl-C. Here the signal goes to a sleeping thread on purpose."""
    done = subprocess.run([sys.executable, "-c", ANOTHER_THREAD], capture_output=True, text=True, timeout=20)
    assert done.stdout.strip() == "interrupted", done.stderr[-2000:]
