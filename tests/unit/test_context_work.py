"""One turn of the context engine does the same work whatever the history's length (issue 34, point 1): the
rolling mask resumes its scan, the window is measured from the running tally. Work is counted, not timed."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agent_runtime import Deadline, RunContext, RunRecord, RunState, ToolRegistry, tool
from agent_runtime import messages as m
from agent_runtime.context import ContextEngine, ContextSettings, TokenCounter
from agent_runtime.context.compaction import Compactor
from agent_runtime.files import InMemoryFileStore
from agent_runtime.loop import Run
from agent_runtime.models import ToolCall
from agent_runtime.tools import ToolOutcome

from tests.conftest import make_workflow

COUNTER = TokenCounter("gpt-4.1")


@tool
def read_section(n: int) -> str:
    """Read one section.

    Args:
        n: Section number.
    """
    return str(n)


def engine_with_history(sections: int, **settings: Any) -> tuple[ContextEngine, Run]:
    workflow = make_workflow(window=2_000_000, output=4_096, context=ContextSettings(**settings))
    engine = ContextEngine(workflow, ToolRegistry([read_section]), counter=COUNTER)
    state = RunState("run-w", workflow.name, [m.system("You read."), m.user("Read it all.")])
    run = Run(workflow, state, RunRecord(state.run_id, workflow.name, "gpt-4.1", state=state),
              RunContext(state.run_id, workflow.name, InMemoryFileStore()), Deadline.none())  # fmt: skip
    engine.on_run_start(run)
    for n in range(sections):
        turn(engine, run, n)
    return engine, run


def turn(engine: ContextEngine, run: Run, n: int) -> None:
    call = ToolCall(f"call_{n}", "read_section", json.dumps({"n": n}))
    run.state.messages.append(m.assistant(f"Notes on {n - 1}.", [call.to_dict()]))
    outcome = engine.on_tool_result(run, ToolOutcome(call, f"section {n}: " + "lorem ipsum dolor " * 120))
    run.state.messages.append(m.tool_result(call.id, outcome.content))
    engine.before_model_call(run, list(run.state.messages))


@contextmanager
def counted(monkeypatch: Any) -> Iterator[Counter[str]]:
    work: Counter[str] = Counter()
    message, between = TokenCounter.message, Compactor.maskable_between

    def counting_message(self: TokenCounter, msg: m.Message) -> int:
        work["messages counted"] += 1
        return message(self, msg)

    def counting_between(self: Compactor, messages: list[m.Message], start: int, end: int, names: dict[str, str]):
        work["messages scanned for masking"] += end - start
        return between(self, messages, start, end, names)

    monkeypatch.setattr(TokenCounter, "message", counting_message)
    monkeypatch.setattr(Compactor, "maskable_between", counting_between)
    yield work


def work_of_one_turn(sections: int, monkeypatch: Any) -> Counter[str]:
    # A mask threshold never reached: the rolling mask scans every turn and never masks (masking is a batch
    # whose work is paid once; what must not grow is the turn without it).
    engine, run = engine_with_history(sections, mask_threshold_tokens=10_000_000)
    with monkeypatch.context() as patch, counted(patch) as work:
        turn(engine, run, sections)
    return work


def test_a_turn_costs_the_same_at_a_short_and_a_long_history(monkeypatch: Any) -> None:
    short, long = work_of_one_turn(20, monkeypatch), work_of_one_turn(400, monkeypatch)  # ~6k vs ~120k tokens
    assert long["messages scanned for masking"] == short["messages scanned for masking"] <= 3
    assert long["messages counted"] == short["messages counted"] <= 12
