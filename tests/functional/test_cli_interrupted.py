"""A CLI run whose process died mid-run reads the same everywhere and keeps what it spent: `runs list` and
`runs show` both say interrupted, with the model calls, tokens and cost of every call in its last checkpoint's
transcript, and `runs stop` closes it with those, as does a resumed run the invocation that was cut off.
Was: show said "is still running" while list said interrupted, and the closed record had 0 calls, 0 tokens and
cost `-` for a transcript of three turns."""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agent_runtime.cli import main
from agent_runtime.record import RunRecord, RunState
from agent_runtime.spend import SPENT
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.stores.hook import SO_FAR
from agent_runtime.stores.running import Started
from agent_runtime.testing import ScriptedServer, call
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_support import REPO
from tests.killed_support import FLOW, TOOLS, cli


def killed_run(tmp_path: Path, server: ScriptedServer, *thread: str) -> tuple[dict[str, str], str]:
    """A CLI run killed in its last tool call; its environment and its run id."""
    (tmp_path / "gate").mkdir()
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "check_tools.py").write_text(TOOLS)
    (tmp_path / "checks.yaml").write_text(FLOW)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
    env |= {"OPENAI_BASE_URL": server.base_url, "AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_SANDBOX": "off",
            "AGENT_TOOLS_PATH": str(tmp_path / "tools"), "GATE": str(tmp_path / "gate")}  # fmt: skip
    command = [
        sys.executable,
        "-m",
        "agent_runtime",
        "run",
        str(tmp_path / "checks.yaml"),
        "-q",
        "-m",
        "check",
        *thread,
    ]
    run = subprocess.Popen(command, env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    until = time.monotonic() + 30
    while not (tmp_path / "gate" / "started").exists():
        assert time.monotonic() < until and run.poll() is None, run.communicate()
        time.sleep(0.02)
    run.send_signal(signal.SIGKILL)
    run.communicate(timeout=30)
    [row] = RunStore(LocalStore(tmp_path / "state")).list_runs()
    return env, row.run_id


def test_a_killed_run_reads_interrupted_everywhere_and_keeps_its_spend(
    scripted: Any, tmp_path: Path
) -> None:  # fmt: skip
    rounds = [call("check", {"service": name}) for name in ("api", "db", "queue")]
    server = scripted(*rounds, call("check", {"service": "held"}))
    env, run_id = killed_run(tmp_path, server, "-t", "T-k")
    listed = json.loads(cli(env, "runs", "list", "--json").stdout)
    [row] = [r for r in listed if r["run_id"] == run_id]
    shown = cli(env, "runs", "show", run_id)
    assert shown.returncode == 0, shown.stderr  # was: "is still running: its record is stored when it ends"
    head = shown.stdout.splitlines()[0]
    assert f"run {run_id} · checks · interrupted · gpt-4o · 3 model calls · {row['tokens']:,} tokens" in head
    assert row["status"] == "interrupted" and row["model_calls"] == 3 and row["tokens"] > 0 and row["cost_usd"] > 0
    assert shown.stdout.count("-> check") == 3  # the transcript: the three turns the checkpoint kept
    assert "`runs stop " in shown.stdout
    as_json = json.loads(cli(env, "runs", "show", run_id, "--json").stdout)
    assert as_json["status"] == "interrupted" and as_json["cost_usd"] == row["cost_usd"]
    assert cli(env, "runs", "stop", run_id).returncode == 0
    record = json.loads(cli(env, "runs", "show", run_id, "--json").stdout)
    assert record["status"] == "stopped" and len(record["model_calls"]) == 3 and len(record["tool_calls"]) == 3
    assert (record["usage"]["total_tokens"], record["cost_usd"]) == (row["tokens"], row["cost_usd"])  # was 0, None
    [closed] = json.loads(cli(env, "runs", "list", "--json").stdout)
    assert (closed["status"], closed["model_calls"], closed["tokens"]) == ("stopped", 3, row["tokens"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.integers(0, 5), later=st.integers(0, 3), resumed=st.booleans())
def test_an_invocation_cut_off_at_any_step_leaves_what_it_spent_by_its_last_checkpoint(
    steps: int, later: int, resumed: bool, tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever step the process died after (``steps`` checkpointed), and whether a later invocation resumed the run
    first (``later`` calls before ITS death; none: its first checkpoint not yet written): `runs show` and the record
    `runs stop` closes the run with count each invocation's checkpointed calls once, and spend the last
    checkpoint's ledger."""
    root = tmp_path_factory.mktemp("store")
    monkeypatch.setenv("AGENT_STATE_DIR", str(root))
    store, state = RunStore(LocalStore(root)), RunState("run-cut", "checks")

    def invocation(calls: int, started: str, before: int) -> None:
        """One process's steps, as the CLI's hooks store them: its row, then a call and a checkpoint each."""
        record = RunRecord("run-cut", "checks", "gpt-4o", started_at=started)
        store.save_started(record, thread_id=None, process={"pid": 2**31 - 1, "host": socket.gethostname()})
        for n in range(calls):
            record.model_calls.append({"turn": n, "usage": {"prompt_tokens": 100, "completion_tokens": 10,
                                                             "total_tokens": 110}})  # fmt: skip
            SPENT.set(state.context, {"run": round(0.01 * (before + n + 1), 6)})  # the ledger carries the spend
            SO_FAR.set(state.context, {"started_at": started, "model_calls": record.model_calls, "tool_calls": []})
            kept = store.load_checkpoint("run-cut")
            store.save_checkpoint(state, expected_version=kept[1] if kept else None)

    invocation(steps, "2026-01-01T00:00:00Z", 0)
    if resumed:  # a resumed invocation records the one cut off first (Started), from the checkpoint it resumes
        cut = RunRecord("run-cut", "checks", "gpt-4o", started_at="2026-01-01T00:05:00Z")
        Started(store, None).on_run_start(SimpleNamespace(record=cut, state=state))  # type: ignore[arg-type]
        invocation(later, "2026-01-01T00:05:00Z", steps)
    total = steps + (later if resumed else 0)
    for when in ("shown", "closed"):
        if when == "closed":
            assert main(["runs", "stop", "run-cut"]) == 0
        record = _json(["runs", "show", "run-cut", "--json"])
        assert record["status"] == ("interrupted" if when == "shown" else "stopped")
        assert len(record["model_calls"]) == total and record["usage"]["total_tokens"] == 110 * total
        assert record["cost"].get("run", 0.0) == pytest.approx(0.01 * total)
        [row] = json.loads(_text(["runs", "list", "--json"]))
        assert (row["model_calls"], row["tokens"]) == (total, 110 * total)  # list says the same


def _text(argv: list[str]) -> str:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert main(argv) == 0
    return out.getvalue()


def _json(argv: list[str]) -> dict[str, Any]:
    return json.loads(_text(argv))  # type: ignore[no-any-return]
