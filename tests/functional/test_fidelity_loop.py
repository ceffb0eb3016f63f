"""A compaction never makes the agent redo work. The context-fidelity suite's long tool loop (30 pages read one at a
time, then a detail of page 2) in a small window and in a large one, through the eval runner, the shipped
fidelity-reader workflow and the demo model over HTTP, where the compactions fall moved by the pages' sizes and the
small window (as the random ids' token counts move them from run to run): every page is read once, no call is
made twice, and the small window's run costs no more tokens than the large one's (the margin: none).

Measured over 46 draws (pages of 1,000 to 2,000 tokens, windows of 7k to 9k): the small run took 0.59 to 0.88 of
the large one's tokens. Before, the demo model's summary repeated every note, grew with every page until the engine
stopped summarising and offloaded it to a file, which the demo model read again after each masking, and a read cut
short or masked lost where it was: one run in six re-read seven pages (1.07 of the large run's tokens, with the
suite's pages), and of sixteen draws (windows up to 10k) five failed, nine made a call twice and one cost 1.02.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.evals import EvalOptions, Runner, load_cases
from agent_runtime.evals.runner import Attempt
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO

LOOP = "early-detail-in-a-long-tool-loop"
LARGE = 128_000
MARGIN = 1.0  # the small window's run takes at most this share of the large one's tokens (measured: at most 0.88)


def _attempts(tmp: Path, pad: int, small: int) -> dict[int, Attempt]:
    suite = load_cases("context-fidelity", [REPO / "evals" / "context-fidelity.yaml"])
    case = next(c for c in suite if c.name == LOOP)  # one cell of its matrix: the window is set below
    stubs = tuple(
        dataclasses.replace(stub, rules=tuple(dataclasses.replace(rule, pad_tokens=pad) for rule in stub.rules))
        for stub in case.stubs
    )
    cases = [
        dataclasses.replace(case, stubs=stubs, settings={"context.context_budget": budget}, variant=str(budget))
        for budget in (small, LARGE)
    ]
    config = RuntimeConfig.from_env({"AGENT_STATE_DIR": str(tmp)})  # no endpoint: the demo model
    attempts = Runner(config, EvalOptions(parallel=2)).run(cases)
    return {int(a.case.variant): a for a in attempts}


@pytest.mark.slow
@settings(max_examples=3, deadline=None)
@given(pad=st.integers(1_000, 2_000), small=st.integers(7_000, 9_000))
def test_a_compaction_never_makes_the_long_tool_loop_redo_work(tmp_path_factory: pytest.TempPathFactory,
                                                               pad: int, small: int) -> None:  # fmt: skip
    runs = _attempts(tmp_path_factory.mktemp("state"), pad, small)
    few, many = runs[small], runs[LARGE]
    assert few.passed and many.passed, (few.error, few.answer, many.error)
    assert few.compactions > 0 and many.compactions == 0  # the small window really was outgrown
    pages = [call["arguments"].get("page") for call in few.tool_calls if call["name"] == "read_page"]
    assert sorted(pages) == list(range(1, 31)), pages  # every page once: none read again after a compaction
    made = [(call["name"], sorted(call["arguments"].items())) for call in few.tool_calls]
    assert len(made) == len({repr(m) for m in made}), made  # and no other call made twice (a summary re-read)
    assert few.prompt_tokens <= MARGIN * many.prompt_tokens, (few.prompt_tokens, many.prompt_tokens)
