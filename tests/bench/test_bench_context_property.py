"""The context engine's invariant over a grid (``make bench``): runs held / runs tried, per window and drift.

Every cell is a set of whole runs (tests/functional/context_property.py): message sizes from 10 to 60,000
tokens, one line or many, attachments from one huge line to 20,000 short ones, random reads, loads, peeks and
greps in parallel batches, thresholds above and below the window, workflows written for a bigger window than
the server's (told by the server, or not). A run holds when it completes, sends no request over the server's
window (one is allowed before the engine learns a drifting tokenizer or an untold window), sends no orphan, and
finds both planted identifiers; in a window that cannot clearly hold the prompt and the tools, a clean ending
("too small", said once) holds too.
"""

from __future__ import annotations

import itertools
import os
import random
import time

from tests.functional.context_property import Case, holds, run_case

WINDOWS = (2_048, 3_000, 4_096, 8_192, 16_000, 32_000, 128_000)
DRIFTS = (1.0, 1.3, 1.6, 1.9)  # a real tokenizer against tiktoken: Gemma counts up to 1.9 times
ACTIONS = ("range", "read", "bytes", "grep", "peek", "load")


def cases_for(window: int, drift: float, count: int, rng: random.Random) -> list[Case]:
    out = []
    for _ in range(count):
        output = rng.choice([o for o in (256, 1_024, 4_096) if o <= window // 4])
        offload_at = rng.choice([200, 1_000, 10_000, 50_000])
        out.append(
            Case(
                window=window,
                output=output,
                threshold=rng.choice([0.5, 0.8, 0.95]),
                offload_at=offload_at,
                preview=rng.choice([p for p in (50, 200, 1_000) if p < offload_at]),
                message_tokens=rng.choice([10, 900, 3_000, 7_800, 20_000, 60_000]),
                message_line_words=rng.choice([0, 12, 400]),
                file_lines=rng.choice([1, 40, 3_000, 20_000]),
                file_line_words=rng.choice([3, 12, 2_000]),
                drift=drift,
                actions=tuple(
                    tuple(rng.choice(ACTIONS) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(0, 8))
                ),
                seed=rng.randint(0, 10_000),
                # a workflow written for a bigger window than the server's, which says so, or not
                configured=rng.choice([0, 0, 16_000, 1_047_576]) if window < 16_000 else 0,
                kind=rng.choice(["", "llama.cpp", "ollama"]),
            )
        )
    return out


def test_context_invariant_grid() -> None:
    rng = random.Random(int(os.environ.get("BENCH_CONTEXT_SEED", "20261122")))
    per_cell = int(os.environ.get("BENCH_CONTEXT_RUNS", "40"))
    started = time.monotonic()
    failures: list[tuple[Case, list[str]]] = []
    print(f"\nContext invariant, {per_cell} runs per cell (held / tried; in brackets: ended 'too small')")
    print("window     " + "".join(f"drift {d:<8}" for d in DRIFTS))
    for window in WINDOWS:
        row = []
        for drift in DRIFTS:
            held = small = 0
            for case in cases_for(window, drift, per_cell, rng):
                outcome = run_case(case)
                broken = holds(case, outcome)
                held += not broken
                small += outcome.status != "completed"  # a tight window's clean "too small" ending
                failures += [(case, broken)] if broken else []
            row.append(f"{held}/{per_cell}" + (f" ({small})" if small else ""))
        print(f"{window:<11,}" + "".join(f"{cell:<14}" for cell in row))
    print(f"{len(failures)} run(s) broke the invariant; {time.monotonic() - started:.0f} s")
    for case, broken in itertools.islice(failures, 5):
        print(f"  {broken}: {case}")
    assert not failures
