"""The local sandbox's side-by-side calls x a run's parallel tool calls x a sub-agent (A x parallel x helpers).

Invariant: a parent's python calls and a helper's, in one step, each come back under its own call id — in the
parent's record and in the helper's, as ``runs show`` shows them — and the sandbox's limit of calls at once never
deadlocks them. It cannot by construction: a slot is held only while Node runs that call's script, and a script
waits on nothing of the run's (no tool of the run is reachable from the sandbox), so the parent's calls holding
every slot end by themselves (by their time limit at worst) and the helper's call, waiting for a slot, gets one.
The case shows it with fewer slots than the step's python calls.

Real paths: the Node + Deno + Pyodide sandbox (the scripts sleep with asyncio: no CPU burnt), the loop's parallel
tool calls, the sub-agent tool, the scripted model over HTTP, the record stored and read back by the CLI."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Services
from agent_runtime.files import InMemoryFileStore
from agent_runtime.record import RunRecord
from agent_runtime.runtime import build_agent
from agent_runtime.sandbox import LocalSandbox, SandboxSettings
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.stores.hook import PersistenceHook
from agent_runtime.subagents import SubagentSettings
from agent_runtime.testing import ScriptedCall, ScriptedRequest, calls, reply

from tests.cli_support import run_cli
from tests.conftest import REPO, make_workflow, model_for
from tests.sandbox_support import sleeping, waiting
from tests.subagents_support import is_child

SLOTS = 2  # fewer than the step's python calls: the helper's call must wait for one the parent holds
PARENT_CALLS = 3
IDS = {"call_helper": "helper"} | {f"call_p{i}": f"parent {i}" for i in range(PARENT_CALLS)}  # its result's value
NO_DEADLOCK_WITHIN = 60.0  # each script sleeps 1 s; a deadlock would be for ever


@pytest.fixture(scope="module")
def narrow() -> Iterator[LocalSandbox]:
    client = LocalSandbox(REPO / "functions" / "sandbox", concurrency=SLOTS)
    client.check()
    client.run("None")  # Node started: the case measures the calls, not the first start
    yield client
    client.close()


def step() -> Any:
    """The helper first: it starts first, yet its python call comes after the parent's have taken every slot."""
    python = [ScriptedCall("python", {"code": sleeping(1, f"parent {i}")}, f"call_p{i}") for i in range(PARENT_CALLS)]
    return calls(ScriptedCall("subagent", {"task": "work out the helper's part with python"}, "call_helper"), *python)


def model(request: ScriptedRequest) -> Any:
    results = request.tool_results()
    if is_child(request):
        if results:
            return reply("the helper's part: " + " ".join(results.values()))
        return calls(ScriptedCall("python", {"code": sleeping(1, "helper")}, "call_h0"))
    return reply("done: " + " | ".join(results.values())) if results else step()


def run_in_thread(agent: Any, sample: Callable[[], None]) -> RunRecord:
    """The run in a thread of its own, ``sample`` called as it works: a deadlock fails here instead of hanging."""
    done: Future[RunRecord] = Future()
    threading.Thread(target=lambda: done.set_result(agent.run("work it out")), daemon=True).start()
    deadline = time.monotonic() + NO_DEADLOCK_WITHIN
    while not done.done() and time.monotonic() < deadline:
        sample()
        time.sleep(0.02)
    return done.result(timeout=0.1)


@pytest.mark.timed  # side-by-side sandbox calls, a helper and the CLI: run alone
def test_a_parents_python_calls_and_its_helpers_each_answer_under_their_own_id(
    scripted, narrow: LocalSandbox, tmp_path: Path
) -> None:
    server = scripted(intercept=model)
    flow = replace(
        make_workflow(),
        sandbox=SandboxSettings(enabled=True, time_limit_seconds=30),
        subagents=SubagentSettings(enabled=True),
    )
    runs = RunStore(LocalStore(tmp_path))
    kept = PersistenceHook(runs, mutating=set())  # as the CLI keeps a run: its checkpoint and record
    agent = build_agent(flow, model_for(server), Services(sandbox=narrow), files=InMemoryFileStore(), hooks=[kept])
    busy: list[int] = []
    record = run_in_thread(agent, lambda: busy.append(waiting(narrow)))
    assert record.status.value == "completed", record.stop_reason
    shown = run_cli("runs", "show", record.run_id, "--json", env={"AGENT_STATE_DIR": str(tmp_path)})
    assert shown.returncode == 0, shown.stderr
    stored = json.loads(shown.stdout)
    assert {c["id"]: c["is_error"] for c in stored["tool_calls"]} == {name: False for name in IDS}
    [helper] = stored["children"]
    assert [(c["id"], c["is_error"]) for c in helper["tool_calls"]] == [("call_h0", False)]
    assert "result: helper" in helper["final_answer"]
    state, _ = runs.load_checkpoint(record.run_id) or (None, 0)
    assert state is not None
    answered = {m["tool_call_id"]: str(m["content"]) for m in state.messages if m["role"] == "tool"}
    assert set(answered) == set(IDS)
    for call_id, value in IDS.items():  # each result under its own id, none under another's
        assert f"result: {value}" in answered[call_id], (call_id, answered[call_id])
        assert [i for i, text in answered.items() if f"result: {value}" in text] == [call_id]
    assert max(busy) <= SLOTS  # the limit held while the helper waited for a slot
