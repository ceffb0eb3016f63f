"""A thread's turns in ``runs show`` and on the run's page: numbered as the run's record numbers them, across the
thread's runs, so each turn's cost and events sit beside the words that turn made — also when a turn left no
message (a model call closed by a stop) or a compaction dropped the thread's first messages; with neither, the
thread's turns number 1..n in order."""

from __future__ import annotations

from typing import Any

from agent_runtime import messages as m
from agent_runtime.reading.show import entries
from agent_runtime.views import read_run
from hypothesis import given, settings
from hypothesis import strategies as st

# A run: its turns that called tools, then how it ended: an answer, a model call a stop closed (a turn counted,
# no message), or neither (it failed, or waits).
RUN = st.builds(lambda tools, end: ["tool"] * tools + ([end] if end else []), st.integers(0, 3),
                st.sampled_from(["answer", "closed", ""])).filter(bool)  # fmt: skip
THREAD = st.lists(RUN, min_size=1, max_size=4)


def thread(runs: list[list[str]]) -> tuple[list[Any], dict[str, Any], list[int]]:
    """The last run's checkpoint (the thread's history), its record, and each assistant message's true turn."""
    history: list[Any] = [m.system("s")]
    turns: list[int] = []
    calls: list[dict[str, Any]] = []
    tools: list[dict[str, Any]] = []
    turn = 0
    for number, kinds in enumerate(runs):
        last = number == len(runs) - 1
        history.append(m.user(f"run {number}"))
        for kind in kinds:
            turn += 1  # the run's state counts on across the thread's runs
            if kind == "closed":
                continue
            if last:
                calls.append({"turn": turn, "cost_usd": turn / 1000, "usage": {"prompt_tokens": turn}})
            if kind == "answer":
                history.append(m.assistant(f"answer of turn {turn}"))
            else:
                call = {"id": f"call_{turn}", "type": "function", "function": {"name": f"t{turn}", "arguments": "{}"}}
                history += [m.assistant(None, [call]), m.tool_result(f"call_{turn}", "ok")]
                tools += [{"turn": turn, "id": f"call_{turn}", "name": f"t{turn}"}] if last else []
            turns.append(turn)
    record = {"run_id": "run-1", "workflow": "w", "status": "completed", "model_calls": calls, "tool_calls": tools}
    return history, record, turns


@settings(max_examples=80, deadline=None)
@given(runs=THREAD, dropped=st.integers(0, 6))
def test_each_turn_is_numbered_as_the_record_numbers_it_and_in_order(runs: list[list[str]], dropped: int) -> None:
    history, record, truth = thread(runs)
    said = [i for i, message in enumerate(history) if message["role"] == "assistant"]
    cut = min(dropped, len(said) - 1) if said else 0  # a compaction dropped the first messages (not the run's own)
    own = sum(1 for kind in runs[-1] if kind != "closed")
    cut = max(0, min(cut, len(said) - own))
    if cut:
        history = [history[0], m.user("summary"), *history[said[cut] :]]
        truth = truth[cut:]
    shown = entries(read_run(record), history)
    numbers = [int(e.text.removeprefix("turn ")) for e in shown if e.kind == "turn"]
    assert len(numbers) == len(truth) and numbers == sorted(set(numbers)) and all(n >= 1 for n in numbers)
    mine = len(truth) - own  # the last run's messages: where its record puts them, costs beside them
    assert numbers[mine:] == truth[mine:]
    for entry, turn in zip([e for e in shown if e.kind == "turn"][mine:], truth[mine:], strict=True):
        assert entry.detail.startswith(f" · ${turn / 1000:.4f}")
    if not any("closed" in run for run in runs) and not cut:
        assert numbers == list(range(1, len(numbers) + 1))  # a thread's turns: 1..n in order
