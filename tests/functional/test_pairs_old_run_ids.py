"""Run ids x the runs stored before them (D x the store): the CLI minted ``run-`` and 16 hex digits until run ids
got one format of 24. A run stored under an old id, by the old minter, still reads everywhere the new ones do:
``runs show`` and ``runs list`` name it, ``run -t OLD_ID`` goes on with its thread (from its last checkpoint when
its process was killed mid-run: the turn resumes), and ``runs stats`` counts it.

The old runs are written as the old code did: the real CLI in a subprocess, its run id minted by the old
function (``uuid4().hex[:16]``); everything after is today's CLI."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agent_runtime.ids import RUN_ID_HEX
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.testing import ScriptedRequest, call, reply

from tests.cli_support import REPO
from tests.killed_support import FLOW, TOOLS, cli

OLD_MINTER = """\
import sys, uuid
import agent_runtime.cli.one_run as one_run
one_run.new_run_id = lambda prefix="run-": f"{prefix}{uuid.uuid4().hex[:16]}"  # the CLI's ids before 24 digits
from agent_runtime.cli import main
sys.exit(main(sys.argv[1:]))
"""
OLD_ID = re.compile(r"run-[0-9a-f]{16}")


def old_cli(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    command = [sys.executable, "-c", OLD_MINTER, *args]
    return subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def setup(tmp_path: Path, base_url: str) -> dict[str, str]:
    import os

    (tmp_path / "gate").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "check_tools.py").write_text(TOOLS)
    (tmp_path / "checks.yaml").write_text(FLOW)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
    return env | {"OPENAI_BASE_URL": base_url, "AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_SANDBOX": "off",
                  "AGENT_TOOLS_PATH": str(tmp_path / "tools"), "GATE": str(tmp_path / "gate")}  # fmt: skip


def test_runs_stored_under_the_old_16_digit_ids_show_go_on_resume_and_count(scripted: Any, tmp_path: Path) -> None:
    def answer(request: ScriptedRequest) -> Any:
        """One check, then the answer; "kill it" checks once more, a call its process dies in (after a step, so
        its turn has a checkpoint to resume from)."""
        done = request.tool_results()
        if "kill" in request.last_user_text() and done and "api: up" in done.values():
            return call("check", {"service": "held"})
        return reply(f"answered: {request.last_user_text()}") if done else call("check", {"service": "api"})

    server = scripted(intercept=answer)  # as many calls as the turns take
    env, flow = setup(tmp_path, server.base_url), str(tmp_path / "checks.yaml")
    # An old run that answered, and one whose process was killed in its tool call (its checkpoint kept).
    done = old_cli(env, "run", flow, "-q", "-m", "check api")
    assert done.wait(60) == 0, done.communicate()
    killed = old_cli(env, "run", flow, "-q", "-m", "kill it")
    until = time.monotonic() + 30
    while not (tmp_path / "gate" / "started").exists():
        assert time.monotonic() < until and killed.poll() is None, killed.communicate()
        time.sleep(0.02)
    killed.send_signal(signal.SIGKILL)
    killed.communicate(timeout=30)
    (tmp_path / "gate" / "started").unlink()
    runs = RunStore(LocalStore(tmp_path / "state"))
    olds = {("completed" if row.status == "completed" else "interrupted"): row.run_id for row in runs.list_runs()}
    assert len(olds) == 2 and all(OLD_ID.fullmatch(i) for i in olds.values()), olds

    shown = cli(env, "runs", "show", olds["completed"])
    assert shown.returncode == 0 and "answered: check api" in shown.stdout, shown.stderr
    assert "interrupted" in cli(env, "runs", "show", olds["interrupted"]).stdout.splitlines()[0]

    # Each old run's thread goes on (the killed one from its checkpoint: its unanswered call settled first).
    for status, message in (("completed", "and the db?"), ("interrupted", "go on")):
        turn = cli(env, "run", flow, "-q", "-t", olds[status], "-m", message)
        assert turn.returncode == 0, turn.stderr
        assert turn.stdout.strip().startswith(f"answered: {message}"), turn.stdout
        history = server.requests[-1].messages
        assert any(m.get("role") == "user" and "check api" in str(m.get("content")) for m in history) == (
            status == "completed"
        )
        assert any(m.get("role") == "user" and "kill it" in str(m.get("content")) for m in history) == (
            status == "interrupted"
        )
    listed = json.loads(cli(env, "runs", "list", "--json").stdout)
    threads = {row["run_id"]: row.get("thread") or row.get("thread_id") for row in listed}
    new = [run_id for run_id in threads if run_id not in olds.values()]
    assert len(new) == 2 and all(len(i) == len("run-") + RUN_ID_HEX for i in new)
    assert sorted(threads[i] for i in new) == sorted(olds.values())  # each new turn in its old run's thread

    stats = json.loads(cli(env, "runs", "stats", "--json").stdout)
    assert stats["runs"] == 4, json.dumps([stats, listed])
    assert stats["unreadable"] == 0 and stats["failures_by_reason"] == {"interrupted": 1}  # was: "damaged or gone"
