"""The CLI loads what a command needs when it runs: `--version`, `--help` and `runs list` on the local store start
without the openai client, boto3 or the context engine (each ~0.1-0.7 s of CPU; `make bench` measures the start-up
itself against `import boto3`). Each command runs in a fresh interpreter, which then says what it had imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("openai", "boto3", "botocore", "tiktoken", "agent_runtime.context", "agent_runtime.runtime")
PROBE = """\
import contextlib, io, json, sys
from agent_runtime.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        code = main(sys.argv[1:])
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "out": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def loaded(args: list[str], state_dir: Path) -> tuple[object, str, list[str]]:
    """The exit code, what the command printed and every module imported by the time it ended."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
    env["AGENT_STATE_DIR"] = str(state_dir)  # the local store, empty: AGENT_TABLE/AGENT_BUCKET left out above
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *args], capture_output=True, text=True, env=env, cwd=state_dir, timeout=60
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout.splitlines()[-1])
    return report["code"], report["out"], report["modules"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--version"], "agent-runtime "),
        (["--help"], "runs"),
        (["runs", "list"], "started"),
        (["eval", "--help"], "--threshold"),  # the command that used to load the whole runtime for every other
    ],
)
def test_a_light_command_does_not_load_the_runtime(args: list[str], says: str, tmp_path: Path) -> None:
    code, out, modules = loaded(args, tmp_path)
    assert code == 0 and says in out  # the command did its work: the probe ran the real thing
    heavy = sorted(m for m in modules if any(m == h or m.startswith(f"{h}.") for h in HEAVY))
    assert heavy == [], f"agent-runtime {' '.join(args)} imported {heavy[:8]}"


def test_the_probe_sees_what_a_run_loads(tmp_path: Path) -> None:
    """The same probe on a command that needs the runtime finds it: the test above can fail."""
    _, _, modules = loaded(["workflows", "validate", "--offline"], tmp_path)
    assert {"openai", "agent_runtime.runtime"} <= set(modules)
