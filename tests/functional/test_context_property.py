"""The context engine never fails a run for context reasons: a property over the whole size space.

Cases are drawn by hypothesis (see context_property.py for one case's anatomy); the larger sweep with its grid
is in tests/bench/test_bench_context_property.py (make bench).
"""

from __future__ import annotations

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.functional.context_property import Case, holds, run_case

ACTIONS = st.sampled_from(["range", "read", "bytes", "grep", "peek", "load"])


@st.composite
def cases(draw: st.DrawFn) -> Case:
    window = draw(st.sampled_from([2_048, 4_096, 8_192, 16_000, 32_000, 128_000]))
    output = draw(st.sampled_from([256, 1_024, 4_096]).filter(lambda o: o <= window // 4))
    # A workflow written for a bigger window (document-feedback's 16k on a 4k server), told by the server or not.
    configured = draw(st.sampled_from([0, 0, 16_000, 1_047_576]))
    kind = draw(st.sampled_from(["", "llama.cpp", "ollama"]))
    offload_at = draw(st.sampled_from([200, 1_000, 10_000, 50_000]))
    preview = draw(st.sampled_from([50, 200, 1_000]).filter(lambda p: p < offload_at))
    return Case(
        window=window,
        output=output,
        threshold=draw(st.sampled_from([0.5, 0.8, 0.95])),
        offload_at=offload_at,
        preview=preview,
        message_tokens=draw(st.sampled_from([10, 900, 3_000, 7_800, 20_000, 60_000])),
        message_line_words=draw(st.sampled_from([0, 12, 400])),
        file_lines=draw(st.sampled_from([1, 40, 3_000, 20_000])),
        file_line_words=draw(st.sampled_from([3, 12, 2_000])),
        drift=draw(st.sampled_from([1.0, 1.0, 1.1, 1.3, 1.6, 1.9])),
        actions=tuple(tuple(draw(st.lists(ACTIONS, min_size=1, max_size=3))) for _ in range(draw(st.integers(0, 6)))),
        seed=draw(st.integers(0, 10_000)),
        configured=configured if configured > window else 0,
        kind=kind,
    )


# No shrinking in make test (a shrink runs hundreds of whole runs): a failure prints its case, which
# run_case replays alone.
@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    derandomize=True,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
)
@given(case=cases())
def test_no_run_fails_for_context_reasons(case: Case) -> None:
    outcome = run_case(case)
    assert not holds(case, outcome), (holds(case, outcome), case)
