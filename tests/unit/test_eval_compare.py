"""``eval --compare`` compares like with like: a report of ``--repeat 3`` beside one of a single attempt shows
cost, time and tokens per attempt on both sides (issue 50: the totals line set one attempt's tokens beside the
sum of three)."""

from __future__ import annotations

from pathlib import Path

from agent_runtime.evals import Attempt, build_report, compare
from agent_runtime.evals.cases import Case, Expect
from hypothesis import given, settings
from hypothesis import strategies as st


def attempts(case: str, repeat: int, *, cost: float | None, tokens: int, seconds: float) -> list[Attempt]:
    made = []
    for index in range(repeat):
        done = Attempt(Case(case, "w", Path("w.yaml"), ("q",), Expect()), index, run_ids=[f"run-{case}-{index}"],
                       status="completed", prompt_tokens=tokens - 10, completion_tokens=10, cost_usd=cost,
                       seconds=seconds)  # fmt: skip
        made.append(done)
    return made


def totals(text: str) -> str:
    return text.splitlines()[-1]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.integers(1, 6), st.integers(1, 4), st.integers(20, 50_000),
       st.one_of(st.none(), st.floats(0.0001, 5)), st.floats(0.1, 600))  # fmt: skip
def test_the_same_attempts_repeated_any_number_of_times_compare_as_equal(
    r1: int, r2: int, cases: int, tokens: int, cost: float | None, seconds: float
) -> None:
    """Whatever --repeat each side used, identical attempts show no change: every figure is per attempt."""
    names = [f"case-{n}" for n in range(cases)]
    before = build_report("w", [a for n in names for a in attempts(n, r1, cost=cost, tokens=tokens,
                                                                    seconds=seconds)], {})  # fmt: skip
    after = build_report("w", [a for n in names for a in attempts(n, r2, cost=cost, tokens=tokens,
                                                                   seconds=seconds)], {})  # fmt: skip
    text = compare(before, after)
    money = "-" if cost is None else f"${round(cost, 6):.4f}"
    assert f"per attempt: cost {money} → {money} · tokens {tokens:,} → {tokens:,}" in totals(text)
    assert f"({r1 * cases} → {r2 * cases} attempts)" in totals(text)
    for row in text.splitlines()[5 : 5 + cases]:
        _, was, now, *deltas = row.split()
        assert (was, now) == (f"{r1}/{r1}", f"{r2}/{r2}")
        assert deltas == (["-", "+0.0s"] if cost is None else ["+$0.0000", "+0.0s"])


def test_a_costlier_attempt_shows_as_one_whatever_the_repeat() -> None:
    """One attempt at 1,000 tokens and $0.01 beside three at 1,200 tokens and $0.02 each: +$0.01 and 1,000 →
    1,200 per attempt, not 1,000 → 3,600."""
    before = build_report("w", attempts("a", 1, cost=0.01, tokens=1_000, seconds=2.0), {})
    after = build_report("w", attempts("a", 3, cost=0.02, tokens=1_200, seconds=3.0), {})
    text = compare(before, after)
    assert "cost/attempt Δ" in text and "time/attempt Δ" in text
    row = text.splitlines()[5].split()
    assert row == ["a", "1/1", "3/3", "+$0.0100", "+1.0s"]
    assert totals(text).endswith("(1 → 3 attempts) · per attempt: cost $0.0100 → $0.0200 · tokens 1,000 → 1,200")
