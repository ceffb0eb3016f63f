"""A newcomer's demo model read the same two unreadable files for 20 turns, until the tool-call cap (41 failed
calls, 106k tokens). The promise, over any sequence of calls and failures through build_agent: a call identical to
one that failed MAX_SAME_FAILURES times in a row in this run (same tool, same arguments, however spaced) is not run
again but answered with a tool error that says so; a call whose last run succeeded, or with other arguments, is
never refused; every refusal counts toward the tool-call cap. A refused mutating call is never journalled."""

from __future__ import annotations

import json
import threading
from typing import Any

from agent_runtime import tool
from agent_runtime.errors import ToolError
from agent_runtime.loop.repeats import MAX_SAME_FAILURES
from agent_runtime.messages import text_of
from agent_runtime.runtime import Services, build_agent
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.stores.hook import JOURNAL
from agent_runtime.testing import ScriptedCall, ScriptedServer, calls, reply
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make_workflow, model_for

KEYS = ["a.docx", "b.bin", "c.csv"]
REFUSED = "already failed"


def probe_tool(plans: dict[str, list[bool]], ran: list[tuple[str, bool]]) -> Any:
    """Reads ``key``: its n-th run fails when the n-th entry of its plan (cycled) says so."""
    lock = threading.Lock()

    @tool
    def probe(key: str) -> str:
        """Read one file.

        Args:
            key: The file.
        """
        with lock:
            runs = sum(1 for k, _ in ran if k == key)
            plan = plans[key]
            fails = plan[runs % len(plan)]
            ran.append((key, fails))
        if fails:
            raise ToolError(f"{key} cannot be read")
        return f"{key}: ok"

    return probe


TURNS = st.lists(st.lists(st.tuples(st.sampled_from(KEYS), st.booleans()), min_size=1, max_size=3), max_size=8)
PLANS = st.fixed_dictionaries({key: st.lists(st.booleans(), min_size=1, max_size=4) for key in KEYS})


@settings(max_examples=25, deadline=None)
@given(turns=TURNS, plans=PLANS)
def test_no_identical_call_runs_past_its_failures_and_no_other_is_refused(
    turns: list[list[tuple[str, bool]]], plans: dict[str, list[bool]]
) -> None:
    ran: list[tuple[str, bool]] = []
    tight = (",", ":")  # the same arguments, spaced otherwise: still identical
    steps = [
        calls(*(ScriptedCall("probe", json.dumps({"key": k}, separators=tight if t else None)) for k, t in turn))
        for turn in turns
    ]
    with ScriptedServer([*steps, reply("done")]) as server:
        record = build_agent(make_workflow(), model_for(server), tools=[probe_tool(plans, ran)]).run("go")
    assert record.final_answer == "done", record.stop_reason
    history: dict[str, list[bool]] = {key: [] for key in KEYS}  # each key's runs, failed or not, in order
    results = {m["tool_call_id"]: text_of(m) for m in record.state.messages if m["role"] == "tool"}
    sent = [c for m in record.state.messages for c in m.get("tool_calls", [])]
    cursor = 0
    for turn in turns:
        streaks = {key: _streak(runs) for key, runs in history.items()}  # failures in a row before the turn
        refused = {key: 0 for key in KEYS}
        for (key, _), call in zip(turn, sent[cursor : cursor + len(turn)], strict=True):
            result = results[call["id"]]
            if REFUSED not in result:
                history[key].append(result.startswith("ERROR"))
                continue
            refused[key] += 1
            assert streaks[key] >= 1, key  # refused only after a failure, never after a success or a first call
            assert result == (
                f"ERROR: not run: probe already failed {streaks[key]} times in this run with these same "
                "arguments, and would fail the same way. Stop calling it with these arguments: say in your "
                "answer that it failed, or try something else."
            )
        cursor += len(turn)
        for key, streak in streaks.items():  # after a failure, what the bound leaves runs, and no more
            asked = sum(1 for k, _ in turn if k == key)
            if streak >= 1:
                assert asked - refused[key] == min(asked, max(0, MAX_SAME_FAILURES - streak)), (key, streak)
    # what the tool ran (a batch runs in parallel: its calls' order is the call order only as a whole)
    assert {key: sorted(failed for k, failed in ran if k == key) for key in KEYS} == {
        key: sorted(runs) for key, runs in history.items()
    }
    assert record.state.tool_calls_used == sum(len(turn) for turn in turns)  # refusals count toward the cap


def _streak(runs: list[bool]) -> int:
    """Failures in a row at the end."""
    count = 0
    for failed in reversed(runs):
        if not failed:
            break
        count += 1
    return count


def test_a_refused_mutating_call_is_never_journalled_nor_run(tmp_path: Any) -> None:
    runs, tries = RunStore(LocalStore(tmp_path / "state")), []

    @tool(mutating=True)
    def restart_service(service: str) -> str:
        """Restart a service.

        Args:
            service: Its name.
        """
        tries.append(service)
        raise ToolError(f"{service} is unknown")

    again = [calls(("restart_service", {"service": "payments"})) for _ in range(4)]
    other = calls(("restart_service", {"service": "billing"}))
    with ScriptedServer([*again, other, reply("could not restart it")]) as server:
        agent = build_agent(make_workflow(), model_for(server), Services(runs=runs), tools=[restart_service])
        record = agent.run("restart payments")
    assert tries == ["payments"] * MAX_SAME_FAILURES + ["billing"]  # the other arguments still ran
    assert record.state is not None and record.state.tool_calls_used == 5  # the refused two counted
    journal = JOURNAL.get(record.state.context)
    ran = [c["id"] for c in record.tool_calls if c["name"] == "restart_service"]
    assert sorted(journal) == sorted([*ran[:MAX_SAME_FAILURES], ran[-1]])  # the refused ones are not in it
