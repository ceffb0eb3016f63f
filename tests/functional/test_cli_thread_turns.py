"""Two CLI turns on one thread are taken one at a time, as a deployed thread's are (its messages are one SQS FIFO
group): a second `run -t T` while the first works says it waits, then goes on from the first's answer; every turn
completes, is in the thread once, in the order the turns ran, and each saw every turn before it. A writer that
did not wait its turn (serve, an eval on the same store) costs the turn that lost the save, and then record, exit
code and thread agree: failed, 1, the turn not in the thread, its answer kept in its record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.cli import main
from agent_runtime.messages import text_of
from agent_runtime.stores import LocalStore, RunStore, ThreadStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_support import REPO, run_cli

Start = Callable[..., ScriptedServer]
FLOW = """\
name: turns
description: Answers in turns.
prompt: You answer.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 512}
tools: {python: [turn_tools:note]}
"""
TOOLS = '''
from agent_runtime import tool


@tool
def note(text: str) -> str:
    """Note something.

    Args:
        text: What to note.
    """
    return f"noted {text}"
'''


def turns_in(messages: list[Any]) -> list[str]:
    """The turns a history holds, by their messages' markers (``turn-N``), in order."""
    said = [text_of(m) for m in messages if m.get("role") == "user"]
    return [word for text in said for word in text.split() if word.startswith("turn-")]


def setup(tmp_path: Path, base_url: str) -> dict[str, str]:
    (tmp_path / "tools").mkdir(exist_ok=True)
    (tmp_path / "tools" / "turn_tools.py").write_text(TOOLS)
    (tmp_path / "turns.yaml").write_text(FLOW)
    return {"OPENAI_BASE_URL": base_url, "AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_SANDBOX": "off",
            "AGENT_TOOLS_PATH": str(tmp_path / "tools")}  # fmt: skip


def test_a_second_turn_waits_for_the_first_and_goes_on_from_it(scripted: Start, tmp_path: Path) -> None:
    """The newcomer's case: a slow `run -t T-x`, a second `run -t T-x` 1.5 s later. Was: the first printed its
    answer, then `thread 'T-x' was updated by another run meanwhile`, exit 1, listed completed, not in the thread."""
    streaming, release = threading.Event(), threading.Event()

    def slow(request: ScriptedRequest) -> Any:
        streaming.set()
        assert release.wait(60)  # the first turn is under way until the second has said it waits
        return reply("first answer " * 30)

    def second(request: ScriptedRequest) -> Any:
        return reply(f"second saw {turns_in(request.messages)} and {'first answer' in json.dumps(request.messages)}")

    server = scripted(slow, second)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))} | setup(
        tmp_path, server.base_url
    )
    command = [sys.executable, "-m", "agent_runtime", "run", str(tmp_path / "turns.yaml"), "-q", "-t", "T-x"]
    first = subprocess.Popen([*command, "-m", "turn-1"], env=env, cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert streaming.wait(30)
    then = subprocess.Popen([*command, "-m", "turn-2"], env=env, cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    said: list[str] = []
    reading = threading.Thread(target=lambda: said.append(then.stderr.readline() if then.stderr else ""))
    reading.start()
    reading.join(30)  # the second says it waits while the first holds the thread
    release.set()
    out, err = first.communicate(timeout=60)
    then_out, then_err = then.communicate(timeout=60)
    assert first.returncode == 0 and out.startswith("first answer") and err == "", err
    assert then.returncode == 0, then_err
    assert then_out.strip() == "second saw ['turn-1', 'turn-2'] and True"  # it went on from the first's answer
    [waited] = (said[0] + then_err).splitlines()  # one line said why it waited
    assert waited.startswith("agent-runtime: thread 'T-x' has a turn under way (run-") and "Ctrl-C gives up" in waited
    rows = run_cli("runs", "list", "--thread", "T-x", "--json", env=env)
    assert [row["status"] for row in json.loads(rows.stdout)] == ["completed", "completed"], rows.stderr
    state, _ = ThreadStore(LocalStore(tmp_path / "state")).load("T-x")
    assert state is not None and turns_in(state.messages) == ["turn-1", "turn-2"]


def test_a_turn_whose_thread_another_writer_saved_meanwhile_is_a_failed_run_everywhere(
    scripted: Start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A writer that does not take the thread's turn (serve, an eval) saves the thread while a CLI turn works:
    the CLI turn cannot be kept. Its record says failed and why, the exit code is 1, nothing is printed as the
    answer, the thread keeps the other writer's state; the answer is in the record."""
    threads = ThreadStore(LocalStore(tmp_path / "state"))

    def meanwhile(request: ScriptedRequest) -> Any:
        state, version = threads.load("T-y")  # the first turn's, as another writer would go on from it
        assert state is not None
        other = replace(state, messages=[*state.messages, {"role": "user", "content": "turn-9"}])
        threads.save("T-y", other, expected_version=version)
        return reply("lost answer")

    server = scripted(reply("kept answer"), meanwhile)
    for name, value in setup(tmp_path, server.base_url).items():
        monkeypatch.setenv(name, value)
    flow = str(tmp_path / "turns.yaml")
    assert main(["run", flow, "-q", "-t", "T-y", "-m", "turn-1"]) == 0
    assert capsys.readouterr().out.strip() == "kept answer"
    assert main(["run", flow, "-q", "-t", "T-y", "-m", "turn-2"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert "run failed: this turn is not kept in its thread: thread 'T-y' was updated by another writer" in err
    [lost, kept] = RunStore(LocalStore(tmp_path / "state")).list_runs(thread_id="T-y")
    assert (lost.status, kept.status) == ("failed", "completed")
    record = RunStore(LocalStore(tmp_path / "state")).load_record(lost.run_id) or {}
    assert record["status"] == "failed" and record["final_answer"] == "lost answer"
    assert f"runs show {lost.run_id}" in record["stop_reason"]
    state, _ = threads.load("T-y")
    assert state is not None and turns_in(state.messages) == ["turn-1", "turn-9"] and threads.active("T-y") is None


class Turns:
    """Turns of one thread, each ``main()`` in a thread of its own, against a model whose every answer waits
    until the test lets it go: the test drives the interleaving."""

    def __init__(self, tmp_path: Path) -> None:
        self.pending: list[threading.Event] = []
        self.arrived = threading.Condition()
        self.server = ScriptedServer([], intercept=self._answer)
        self.server.__enter__()
        self.env = setup(tmp_path, self.server.base_url)
        self.flow, self.codes, self.workers = str(tmp_path / "turns.yaml"), {}, []  # type: ignore[var-annotated]

    def _answer(self, request: ScriptedRequest) -> Any:
        gate = threading.Event()
        with self.arrived:
            self.pending.append(gate)
            self.arrived.notify_all()
        assert gate.wait(30), "never released"
        turn = turns_in(request.messages)[-1]
        if not request.tool_results():  # each turn notes once, then answers
            return call("note", {"text": turn})
        return reply(f"answer to {turn}")

    def start(self, n: int) -> None:
        worker = threading.Thread(target=self._run, args=(n,))
        self.workers.append(worker)
        worker.start()

    def _run(self, n: int) -> None:
        self.codes[n] = main(["run", self.flow, "-q", "-t", "T-h", "-m", f"turn-{n}"])

    def release(self, wait: float) -> None:
        """Let the oldest waiting answer go (waiting up to ``wait`` seconds for one to come)."""
        with self.arrived:
            self.arrived.wait_for(lambda: bool(self.pending), timeout=wait)
            if self.pending:
                self.pending.pop(0).set()

    def finish(self) -> None:
        while any(worker.is_alive() for worker in self.workers):
            self.release(0.05)
        self.server.close()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(count=st.integers(2, 3), steps=st.lists(st.sampled_from(["start", "release"]), max_size=6))
def test_turns_of_one_thread_in_any_interleaving_are_each_kept_once_in_order(
    count: int, steps: list[str], tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whenever each turn starts, and however the model's answers come: every turn completes (exit 0), is in the
    thread once, in the order the turns reached the model, and each saw every turn before it, whole."""
    turns = Turns(tmp_path_factory.mktemp("turns"))
    for name, value in turns.env.items():
        monkeypatch.setenv(name, value)
    started = 0
    for step in [*steps, *["start"] * count]:
        if step == "start" and started < count:
            turns.start(started)
            started += 1
        elif step == "release":
            turns.release(0.3)
    turns.finish()
    assert turns.codes == dict.fromkeys(range(count), 0)
    order = [turns_in(r.messages)[-1] for r in turns.server.requests if not r.tool_results()]
    assert sorted(order) == [f"turn-{n}" for n in range(count)]  # each turn reached the model once
    for request in turns.server.requests:  # each saw the turns before it, whole: a note and an answer each
        seen = turns_in(request.messages)
        assert seen == order[: len(seen)]
        before = json.dumps(request.messages)
        assert all(f"answer to {turn}" in before and f"noted {turn}" in before for turn in seen[:-1])
    store = LocalStore(Path(turns.env["AGENT_STATE_DIR"]))
    state, _ = ThreadStore(store).load("T-h")
    assert state is not None and turns_in(state.messages) == order and ThreadStore(store).active("T-h") is None
    rows = RunStore(store).list_runs(thread_id="T-h")
    assert [row.status for row in rows] == ["completed"] * count
