"""A reply asking for hundreds of tool calls, or for calls whose arguments alone outgrow the window, ends in an
answer: the calls past the cap get one result saying what did not run, arguments too large for the window go to
files, every request fits the budget, and the history never holds an orphan (issue 34, point 3)."""

from __future__ import annotations

from agent_runtime.messages import find_orphans, text_of
from agent_runtime.record import RunStatus
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.parallel_support import BUDGET, CAP, run


def check(record, requests) -> None:
    assert record.status in (RunStatus.COMPLETED, RunStatus.TOOL_CALL_LIMIT), record.stop_reason
    assert record.final_answer == "answered: 40 keys"
    assert record.state is not None and find_orphans(record.state.messages) == []
    for call in record.model_calls:
        assert call["usage"]["prompt_tokens"] <= BUDGET
    assert sum(c["executed"] for c in record.tool_calls) <= CAP


def test_300_and_1000_parallel_calls_end_in_an_answer_with_one_result_for_the_refused() -> None:
    for count in (300, 1000):
        record, requests = run(count, 0)
        check(record, requests)
        assert record.status is RunStatus.TOOL_CALL_LIMIT
        refused = [c for c in record.tool_calls if not c["executed"]]
        assert len(refused) == count - CAP and sum(c.get("refused") == "limit" for c in refused) == count - CAP - 1
        last = requests[-1].messages
        results = [text_of(m) for m in last if m["role"] == "tool" and "not run" in text_of(m)]
        assert results == [f"ERROR: not run: this call and {count - CAP - 1} more ({count - CAP} lookup): the "
                           f"workflow's limit of {CAP} tool calls (limits.max_tool_calls) was reached after {CAP} "
                           "ran in this turn"]  # fmt: skip
        sent = [c for m in last for c in m.get("tool_calls", [])]
        assert len(sent) == CAP + 1  # what ran, and the one that says what did not


def test_calls_whose_arguments_alone_exceed_the_window_go_to_files() -> None:
    record, requests = run(20, 4_000)  # ~20k tokens of arguments in a 16k window
    check(record, requests)
    assert any("arguments" in str(e.get("ladder")) for e in record.to_dict()["events"] if e["type"] == "compaction")
    offloaded = [c["function"]["arguments"] for m in requests[-1].messages for c in m.get("tool_calls", [])]
    assert any('"arguments_in_file"' in a and "file-" in a for a in offloaded)


@settings(max_examples=6, deadline=None)
@given(count=st.integers(1, 1200), argument_chars=st.integers(0, 6_000))
def test_any_fan_out_ends_in_an_answer_within_the_budget(count: int, argument_chars: int) -> None:
    if count * argument_chars > 80_000:  # the scripted server streams every byte: keep the test quick
        argument_chars = 80_000 // count
    check(*run(count, argument_chars))
