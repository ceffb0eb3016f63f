"""The CLI's start-up: `agent-runtime --version`, `--help`, `runs list` (an empty local store) and `eval --help`
against `python -c "import boto3"`, in CPU time (the machine is shared: wall time measures the neighbours).

Each command's run is paired with a baseline run, alternately, each in a fresh process whose user and system CPU
`getrusage(RUSAGE_CHILDREN)` reads; the ratio is the median of the pairs'. What each command may import is
checked in `make test` (tests/unit/test_cli_startup.py); this measures it.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

RUNS = 11
BASELINE = [sys.executable, "-c", "import boto3"]
# command, target (x the baseline, issue 49; "before" was 4.2x for --version)
COMMANDS = ((("--version",), 1.0), (("--help",), None), (("runs", "list"), 1.5), (("eval", "--help"), None))


def cli() -> list[str]:
    """The installed command (what a person runs), else the module with this interpreter."""
    script = Path(sys.executable).with_name("agent-runtime")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "agent_runtime"]


def cpu_ms(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert done.returncode == 0, done.stderr[-2000:]
    return (after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime) * 1000


def test_cli_startup(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_", "OPENAI_"))}
    env["AGENT_STATE_DIR"] = str(tmp_path)  # runs list: an empty local store
    command = cli()
    assert shutil.which(command[0]) or Path(command[0]).is_file()
    pairs: dict[tuple[str, ...], list[tuple[float, float]]] = {args: [] for args, _ in COMMANDS}
    for _ in range(RUNS):
        for args, _ in COMMANDS:
            pairs[args].append((cpu_ms(BASELINE, env, tmp_path), cpu_ms([*command, *args], env, tmp_path)))
    floor = statistics.median(b for rows in pairs.values() for b, _ in rows)
    print(f"\n\nCLI start-up, CPU ms (user + system), medians of {RUNS}, each run paired with the baseline's")
    print(f"{'agent-runtime':<16} | {'ms':>4} | vs python -c 'import boto3' ({floor:.0f} ms)")
    for args, target in COMMANDS:
        ours = statistics.median(c for _, c in pairs[args])
        ratio = statistics.median(c / b for b, c in pairs[args])
        verdict = "" if target is None else f", target <= {target}x {'ok' if ratio <= target else 'MISSED'}"
        print(f"{' '.join(args):<16} | {ours:>4.0f} | {ratio:.2f}x{verdict}")
