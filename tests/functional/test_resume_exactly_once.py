"""Kill the worker at every step boundary in turn: each resume completes, the mutating tool runs exactly once,
and the final transcript equals an uninterrupted run's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Agent, Hook, Run, RunStatus, ToolRegistry, tool
from agent_runtime.context import ContextEngine
from agent_runtime.messages import text_of
from agent_runtime.stores import LocalStore, PersistenceHook, RunStore, StoreFileStore
from agent_runtime.testing import Reply, ScriptedCall, ScriptedRequest, ScriptedServer

from tests.conftest import make_workflow, model_for

POSTED: list[str] = []


@tool
def lookup(key: str) -> str:
    """Look something up.

    Args:
        key: What.
    """
    return f"value of {key}"


@tool(mutating=True)
def post_comment(text: str) -> str:
    """Post a comment (changes the outside world).

    Args:
        text: The comment.
    """
    POSTED.append(text)
    return f"posted comment #{len(POSTED)}"


PLAN: list[Any] = [
    [("lookup", {"key": "a"})],
    [("post_comment", {"text": "Review done"})],
    [("lookup", {"key": "b"}), ("lookup", {"key": "c"})],
    "All done.",
]


def planned(request: ScriptedRequest) -> Reply:
    """Deterministic: the next step follows from how many assistant turns the history already has."""
    step = PLAN[sum(1 for msg in request.messages if msg["role"] == "assistant")]
    if isinstance(step, str):
        return Reply(text=step)
    turn = sum(1 for msg in request.messages if msg["role"] == "assistant")
    return Reply(calls=tuple(ScriptedCall(name, args, id=f"call_{turn}_{i}") for i, (name, args) in enumerate(step)))


class Crash(BaseException):  # not an Exception: the loop records those as failed runs; a kill is not caught
    """The worker dies (Lambda timeout, OOM, a lost container)."""


class CrashAt(Hook):
    def __init__(self, boundary: int) -> None:
        self.boundary, self.seen = boundary, 0

    def after_step(self, run: Run) -> None:
        self.seen += 1
        if self.seen == self.boundary:
            raise Crash(f"killed after step {self.boundary}")


def worker(server: ScriptedServer, root: Path, crash: Hook | None) -> Agent:
    """A fresh worker, as a new Lambda invocation would build it: nothing shared but the store."""
    store = LocalStore(root)
    workflow = make_workflow()
    tools = ToolRegistry([lookup, post_comment])
    hooks: list[Hook] = [  # the kill is registered before persistence: closing events run in reverse, so the
        ContextEngine(workflow, tools),  # step's checkpoint is written first, then the worker dies
        *([crash] if crash else []),
        PersistenceHook(RunStore(store), mutating={"post_comment"}),
    ]
    return Agent(workflow, model_for(server), tools=tools, hooks=hooks, files=StoreFileStore(store, "run#R"))


def transcript(messages: list[dict[str, Any]]) -> str:
    return json.dumps([{k: v for k, v in msg.items()} for msg in messages], sort_keys=True)


def uninterrupted(tmp_path: Path) -> tuple[str, list[str]]:
    POSTED.clear()
    with ScriptedServer([], intercept=planned) as server:
        record = worker(server, tmp_path / "clean", None).run("Review it.", run_id="R")
    assert record.status is RunStatus.COMPLETED
    assert record.state is not None
    return transcript(record.state.messages), list(POSTED)


@pytest.mark.parametrize("boundary", [1, 2, 3, 4])
def test_kill_at_each_step_boundary_then_resume(tmp_path: Path, boundary: int) -> None:
    expected, posted = uninterrupted(tmp_path)
    assert posted == ["Review done"]
    POSTED.clear()
    root = tmp_path / f"crash{boundary}"
    with ScriptedServer([], intercept=planned) as server:
        with pytest.raises(Crash):
            worker(server, root, CrashAt(boundary)).run("Review it.", run_id="R")
        checkpoint = RunStore(LocalStore(root)).load_checkpoint("R")
        assert checkpoint is not None
        resumed = worker(server, root, None).run(state=checkpoint[0])
    assert resumed.status is RunStatus.COMPLETED
    assert resumed.state is not None
    assert transcript(resumed.state.messages) == expected
    assert POSTED == ["Review done"]  # exactly once


def test_a_call_interrupted_mid_flight_is_never_repeated(tmp_path: Path) -> None:
    POSTED.clear()
    root = tmp_path / "midflight"

    class DieInsideTheTool(Hook):
        def on_tool_result(self, run: Run, outcome: Any) -> Any:
            if outcome.call.name == "post_comment":
                raise Crash("died after the side effect, before the result was recorded")
            return outcome

    with ScriptedServer([], intercept=planned) as server:
        with pytest.raises(Crash):
            worker(server, root, DieInsideTheTool()).run("Review it.", run_id="R")
        checkpoint = RunStore(LocalStore(root)).load_checkpoint("R")
        assert checkpoint is not None
        resumed = worker(server, root, None).run(state=checkpoint[0])
    assert POSTED == ["Review done"]  # ran once, before the crash; never again
    results = [text_of(msg) for msg in resumed.state.messages if msg["role"] == "tool"]  # type: ignore[union-attr]
    assert any(r.startswith("ERROR: the outcome of this post_comment call is unknown") for r in results)
    assert any(e["type"] == "mutation_unknown" for e in resumed.events)


def test_two_workers_on_one_run_the_second_yields(tmp_path: Path) -> None:
    POSTED.clear()
    root = tmp_path / "race"
    with ScriptedServer([], intercept=planned) as server:
        first = worker(server, root, CrashAt(1))
        with pytest.raises(Crash):
            first.run("Review it.", run_id="R")
        checkpoint = RunStore(LocalStore(root)).load_checkpoint("R")
        assert checkpoint is not None
        stale = json.loads(json.dumps(checkpoint[0].to_dict()))
        done = worker(server, root, None).run(state=checkpoint[0])  # one worker finishes the run
        assert done.status is RunStatus.COMPLETED
        from agent_runtime import RunState

        late = worker(server, root, None).run(state=RunState.from_dict(stale))  # a duplicate delivery
    assert late.status is RunStatus.FAILED and "another worker advanced run R" in (late.stop_reason or "")


def test_a_retried_compaction_is_not_summarized_or_billed_twice(tmp_path: Path) -> None:
    from agent_runtime.context import ContextSettings
    from agent_runtime.stores import StoreSummaryMemo

    from tests.compaction_support import fetch, talkative

    class CrashAfterCompaction(Hook):
        def after_model_call(self, run: Run, response: Any) -> None:
            if any(e["type"] == "compaction" for e in run.record.events):
                raise Crash("killed after compacting, before the step's checkpoint")

    summary_calls: list[ScriptedRequest] = []

    def summaries(request: ScriptedRequest) -> Reply | None:
        if not request.is_compaction():
            return None
        summary_calls.append(request)
        return Reply(text="## Current work\nReading sections.")

    def build(server: ScriptedServer, crash: Hook | None) -> Agent:
        store = LocalStore(tmp_path / "store")
        workflow = make_workflow(window=8_000, output=1_000, context=ContextSettings(mask_threshold_tokens=0))
        tools = ToolRegistry([fetch])
        model = model_for(server)
        hooks: list[Hook] = [
            ContextEngine(workflow, tools, model=model, memo=StoreSummaryMemo(store)),
            PersistenceHook(RunStore(store), mutating=set()),
            *([crash] if crash else []),
        ]
        return Agent(workflow, model, tools=tools, hooks=hooks, files=StoreFileStore(store, "run#C"))

    turns = [talkative(n) for n in range(1, 4)]
    with ScriptedServer([*turns, Reply(text="done")], intercept=summaries) as server:
        with pytest.raises(Crash):
            build(server, CrashAfterCompaction()).run("Read it all.", run_id="C")
        checkpoint = RunStore(LocalStore(tmp_path / "store")).load_checkpoint("C")
        assert checkpoint is not None
        server.add(Reply(text="done"))  # the resumed turn is asked again: the model call was lost with the crash
        resumed = build(server, None).run(state=checkpoint[0])
    assert resumed.status is RunStatus.COMPLETED
    assert len(summary_calls) == 1  # summarized and billed once
    assert any(e["type"] == "compaction_reused" for e in resumed.events)
