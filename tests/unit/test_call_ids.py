"""One namespace for ids that outlive a turn (issue 49): approvals and the mutating-call journal key their entries
by call id for the thread's life, so no call id is ever issued twice in a thread — whatever the server numbers
its calls, however much of the history compaction removed and however far the recent-ids list was trimmed — and a
script's step ids differ from one run (a thread's turn) to the next."""

from __future__ import annotations

from agent_runtime import RunState
from agent_runtime import messages as msgs
from agent_runtime.approvals.gate import APPROVALS
from agent_runtime.loop._turns import ISSUED, call_id_for, issued, unique_call_ids
from agent_runtime.models import ModelResponse, ToolCall
from agent_runtime.stores.hook import JOURNAL
from hypothesis import given, settings
from hypothesis import strategies as st

IDS = st.sampled_from(["call_1", "call_2", "call_1_0_1", "call_t3_0", "", "x"])  # what servers reuse, and ""


@settings(max_examples=200)
@given(
    history=st.lists(IDS.filter(bool), max_size=4, unique=True),
    recent=st.lists(IDS.filter(bool), max_size=4),
    approvals=st.lists(IDS.filter(bool), max_size=4),
    journal=st.lists(IDS.filter(bool), max_size=4),
    reply=st.lists(IDS, min_size=1, max_size=5),
    turn=st.integers(1, 5),
)
def test_a_reply_never_gets_an_id_in_use(
    history: list[str], recent: list[str], approvals: list[str], journal: list[str], reply: list[str], turn: int
) -> None:
    state = RunState(run_id="run-1", workflow="w")
    if history:
        state.messages.append(msgs.assistant(None, [ToolCall(i, "t", "{}").to_dict() for i in history]))
    ISSUED.set(state.context, recent)  # the recent ids kept: compaction and the bound have dropped the others
    decided = {"tool": "t", "arguments_sha256": "", "requested_at": 0.0, "expires_at": 0.0, "status": "approved",
               "by": "U0LEAD", "decided_at": 1.0}  # fmt: skip
    APPROVALS.set(state.context, {key: dict(decided) for key in approvals})  # type: ignore[misc]  (a plain dict)
    JOURNAL.set(state.context, {key: {"status": "done", "tool": "t"} for key in journal})
    response = ModelResponse(None, tuple(ToolCall(i, "t", "{}") for i in reply))
    ids = [call.id for call in unique_call_ids(response, turn, issued(state)).tool_calls]
    assert len(set(ids)) == len(ids) and all(ids)
    assert not set(ids) & {*history, *recent, *approvals, *journal}


@settings(max_examples=30)
@given(runs=st.lists(st.text(min_size=1, max_size=12), min_size=2, max_size=4, unique=True), seed=st.text(max_size=20))
def test_a_scripts_step_has_one_id_in_a_run_and_another_in_each_other_run(runs: list[str], seed: str) -> None:
    states = [RunState(run_id=run_id, workflow="w") for run_id in runs]
    ids = [call_id_for(state, seed) for state in states]
    assert len(set(ids)) == len(ids)  # each turn of a thread is a run of its own
    assert ids == [call_id_for(state, seed) for state in states]  # each invocation of a run: the same id
