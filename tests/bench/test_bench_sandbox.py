"""Sandbox latencies (cold start, a fresh isolated call, a trivial warm call) against their baselines.

The measurements run in Node (tests/bench/sandbox_bench.mjs), the sandbox's own runtime; medians are printed side
by side. Baselines: no memory snapshot (cold, fresh) and one interpreter reused with no isolation at all (warm).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGETS_MS = {"cold": 2500, "fresh": 600, "warm": 20}
LABELS = {
    "cold": "cold start (new process, first call)",
    "fresh": "fresh isolated call (own child)",
    "warm": "trivial warm call (pre-spawned child)",
}


def test_sandbox_latency() -> None:
    node = shutil.which("node")
    assert node, "Node.js is needed"
    out = subprocess.run(
        [node, str(HERE / "sandbox_bench.mjs"), "7"], capture_output=True, text=True, check=True, timeout=600
    )
    summary = json.loads(out.stdout.strip().splitlines()[-1])
    print("\n\nSandbox latency, medians (ours vs baseline; baseline = no snapshot, or a reused interpreter for warm)")
    print(f"{'':<40} | {'ours ms':>8} | {'baseline ms':>11} | {'ratio':>7} | {'target':>8} | n")
    for key, label in LABELS.items():
        row = summary[key]
        ratio = row["baseline_ms"] / row["ours_ms"]
        verdict = "ok" if row["ours_ms"] <= TARGETS_MS[key] else "MISSED"
        print(
            f"{label:<40} | {row['ours_ms']:>8.1f} | {row['baseline_ms']:>11.1f} | {ratio:>6.2f}x | "
            f"<= {TARGETS_MS[key]:>5} | {row['n']} {verdict}"
        )
    print("warm baseline has no isolation at all: the ratio is what a fresh interpreter per call costs")
