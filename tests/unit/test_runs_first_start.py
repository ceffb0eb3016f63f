"""A run resumed over several invocations (the deadline, an approval) has one start everywhere: its first, as its
record keeps it. `runs list` showed its latest invocation's start, `runs show` its first."""

from __future__ import annotations

import contextlib
import io
import json
import os
import tempfile
from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.record import RunRecord, RunStatus
from agent_runtime.stores import LocalStore, RunStore
from hypothesis import given, settings
from hypothesis import strategies as st

LAST = [RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.SUSPENDED, RunStatus.AWAITING_APPROVAL]


def said(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(list(argv)) == 0
    return out.getvalue()


@settings(max_examples=10, deadline=None)
@given(invocations=st.integers(1, 4), last=st.sampled_from(LAST), ended=st.booleans())
def test_a_resumed_runs_start_is_its_first_everywhere(invocations: int, last: RunStatus, ended: bool) -> None:
    """Invariant: whatever the number of invocations and where the last one is (at work, or ended), `runs list`
    (table and JSON) and `runs show` say the first invocation's start."""
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENT_STATE_DIR", folder)
        for key in [k for k in os.environ if k in ("AGENT_TABLE", "AGENT_BUCKET")]:
            patch.delenv(key)
        runs = RunStore(LocalStore(Path(folder)))
        for n in range(invocations):
            record = RunRecord("run-0123456789abcdef01234567", "desk", "m", started_at=f"2025-03-0{n + 1}T10:00:0{n}Z")
            runs.save_started(record, thread_id="t", process={"pid": os.getpid(), "host": "here"})
            if n < invocations - 1 or ended:
                record.status = last if n == invocations - 1 else RunStatus.SUSPENDED
                record.ended_at = record.started_at
                runs.save_record(record, thread_id="t")
        first = "2025-03-01T10:00:00Z"
        assert json.loads(said("runs", "list", "--json"))[0]["first_started_at"] == first
        assert said("runs", "list").splitlines()[1].split()[-3:-1] == ["2025-03-01", "10:00:00"]
        if ended or invocations > 1:
            assert "started 2025-03-01T10:00:00 " in said("runs", "show", record.run_id)
