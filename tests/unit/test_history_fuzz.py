"""Property test: whatever the history and whatever the engine does to it, the sequence stays valid.

Random histories (parallel tool calls answered in any order, mutating tools, large outputs, planted ids) go
through random chains of mutations: threshold compaction, overflow compaction, a JSON checkpoint and resume,
and growth with virtual-file offloads. After every step: no orphaned call or result, valid roles, and every
identifier planted in a user message is still in the window (summary, pinned facts or verbatim).
"""

from __future__ import annotations

import json
import random

from agent_runtime import Deadline, RunContext, RunRecord, RunState, ToolRegistry, tool
from agent_runtime import messages as m
from agent_runtime.context import ContextEngine, ContextSettings
from agent_runtime.context.compaction import CompactionError
from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.loop import Run
from agent_runtime.models import ToolCall
from agent_runtime.tools import ToolOutcome
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests.conftest import make_workflow

VALID_ROLES = {"system", "user", "assistant", "tool"}


@tool
def search(q: str) -> str:
    """Search.

    Args:
        q: Query.
    """
    return q


@tool(mutating=True)
def send(to: str) -> str:
    """Send.

    Args:
        to: Recipient.
    """
    return to


REGISTRY = ToolRegistry([*FILE_TOOLS, search, send])
TURN = st.tuples(
    st.integers(0, 2),  # user message: none, short, long
    st.lists(
        st.tuples(st.sampled_from(["search", "send", "file_read"]), st.sampled_from([5, 80, 600, 1500])), max_size=4
    ),
    st.integers(0, 120),  # assistant text words
    st.booleans(),  # shuffle the order of the results
)


def words(n: int, seed: int) -> str:
    return " ".join(f"w{seed}x{i}" for i in range(n))


class Builder:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.calls = 0
        self.planted: list[str] = []

    def user(self, kind: int) -> m.Message:
        ticket = f"TICK-{len(self.planted) + 100}"
        self.planted.append(ticket)
        filler = words(150 if kind == 2 else 10, len(self.planted))
        return m.user(f"{filler} please handle {ticket}")

    def turn(self, engine: ContextEngine, run: Run, spec: tuple) -> None:
        kind, calls, text_words, shuffle = spec
        if kind:
            run.state.messages.append(self.user(kind))
        if not calls:
            run.state.messages.append(m.assistant(words(text_words, self.calls) or "ok"))
            return
        made = []
        for name, _size in calls:
            self.calls += 1
            made.append(ToolCall(f"call_{self.calls}", name, json.dumps({"q": "x"})))
        run.state.messages.append(m.assistant(words(text_words, 7) or None, [c.to_dict() for c in made]))
        order = list(zip(made, calls, strict=True))
        if shuffle:
            self.rng.shuffle(order)
        for call, (_, size) in order:
            outcome = engine.on_tool_result(run, ToolOutcome(call, words(size, self.calls)))
            run.state.messages.append(m.tool_result(call.id, outcome.content))


def new_run(state: RunState, files: InMemoryFileStore, window: int) -> tuple[ContextEngine, Run]:
    settings = ContextSettings(virtual_file_threshold_tokens=1_000, virtual_file_preview_tokens=200)
    workflow = make_workflow(window=window, output=300, context=settings)
    engine = ContextEngine(workflow, REGISTRY)
    record = RunRecord(state.run_id, workflow.name, "gpt-4o", state=state)
    run = Run(workflow, state, record, RunContext(state.run_id, workflow.name, files), Deadline.none())
    engine.on_run_start(run)
    return engine, run


def assert_valid(run: Run, planted: list[str], where: str) -> None:
    messages = run.state.messages
    assert m.find_orphans(messages) == [], where
    assert all(msg["role"] in VALID_ROLES for msg in messages), where
    ids = [c["id"] for msg in messages for c in msg.get("tool_calls", [])]
    assert len(ids) == len(set(ids)), where
    window = json.dumps(messages)
    lost = [ticket for ticket in planted if ticket not in window]
    assert not lost, f"{where}: lost {lost}"


@settings(max_examples=2000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(TURN, min_size=1, max_size=8),
    ops=st.lists(st.sampled_from(["compact", "overflow", "resume", "grow"]), min_size=1, max_size=6),
    more=st.lists(TURN, min_size=1, max_size=3),
    window=st.sampled_from([2_500, 4_000, 10_000]),
    seed=st.integers(0, 1000),
)
def test_every_mutation_keeps_the_history_valid(turns, ops, more, window, seed) -> None:
    files = InMemoryFileStore()
    builder = Builder(seed)
    state = RunState(run_id="run-fuzz", workflow="test-flow", messages=[m.system("You help."), builder.user(1)])
    engine, run = new_run(state, files, window)
    for spec in turns:
        builder.turn(engine, run, spec)
    assert_valid(run, builder.planted, "build")
    for step, op in enumerate(ops):
        run.state.turn += 1
        if op in ("compact", "overflow"):
            before = json.dumps(run.state.messages)
            try:
                engine._compact(run, "threshold" if op == "compact" else "overflow")
                event(f"{op}: {run.record.events[-1]['tactic']}")
            except CompactionError:
                event(f"{op}: refused")
                assert json.dumps(run.state.messages) == before  # a failed compaction changes nothing
        elif op == "resume":
            restored = RunState.from_dict(json.loads(json.dumps(run.state.to_dict())))
            engine, run = new_run(restored, files, window)
        else:
            for spec in more:
                builder.turn(engine, run, spec)
        assert_valid(run, builder.planted, f"after op {step} ({op})")
        try:  # what would be sent now (this may compact too)
            sent = engine.before_model_call(run, list(run.state.messages))
        except CompactionError:
            continue
        assert m.find_orphans(sent[:-1]) == [] and sent[-1]["content"].startswith("[context status")
        assert_valid(run, builder.planted, f"request after op {step} ({op})")
