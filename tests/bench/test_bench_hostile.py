"""Peak memory of the worst hostile inputs next to an ordinary read of the same file (``make bench``).

Each case runs in a fresh process through the tool the model would call; the figure is that process's peak RSS.
The worker's budget (README) is 1 GiB whatever the inputs; tests/functional/test_hostile_memory.py enforces it
with RLIMIT_AS.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import REPO
from tests.hostile_support import TOOLS, bomb_pdf

SETUP = (
    TOOLS
    + """
row = b"2026-11-20T10:00:00Z INFO worker-3 delivered webhook id=wh-12345 latency=87ms status=200\\n"
log = files.put(row * (100 * 2**20 // len(row)), name="big.log")
"""
)

CASES = {
    "5-line read of a 100 MB log (baseline)": 'call("file_read", id=log.id, start_line=1, end_line=5)',
    "whole-file file_read of it": 'call("file_read", id=log.id)',
    "load_file of it": 'call("load_file", id=log.id)',
    "regex compile bomb": 'call("file_regex", id=log.id, pattern="(?:(?:a{1000}){1000}){1000}")',
    "PDF inflating to 70 MB": 'call("extract_file", id=files.put(PDF, name="bomb.pdf").id)',
}


def peak_mb(code: str, pdf: str) -> tuple[float, str]:
    script = (
        SETUP
        + f"PDF = open({pdf!r}, 'rb').read()\n"
        + f"out = {code}\n"
        + ('print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "|", out[:70].splitlines()[0])')
    )
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(script)], capture_output=True, text=True, cwd=REPO)
    assert result.returncode == 0, result.stderr[-500:]
    peak, _, head = result.stdout.partition("|")
    return float(peak), head.strip()


def test_peak_memory_of_hostile_inputs(tmp_path) -> None:
    pdf = tmp_path / "bomb.pdf"
    pdf.write_bytes(bomb_pdf(70 * 2**20))
    print("\nPeak RSS per case (fresh process; the 100 MB log itself is held in memory by the store)")
    rows = {name: peak_mb(code, str(pdf)) for name, code in CASES.items()}
    baseline = next(iter(rows.values()))[0]
    for name, (peak, head) in rows.items():
        print(f"  {name:<42} {peak:7.0f} MB  ({peak / baseline:.2f}x baseline)  {head[:60]}")
    assert all(peak < 1024 for peak, _ in rows.values())
