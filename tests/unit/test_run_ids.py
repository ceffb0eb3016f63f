"""One run id format whoever mints it: the CLI's (random), serve's and the worker's (an event's digest) and an eval
case's are each a prefix and ``RUN_ID_HEX`` hex digits; an event's id is the same on every delivery. An id of an
older shape (the CLI's 16 digits before) still reads: stored, listed, summarised and shown."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.ids import RUN_ID, RUN_ID_HEX, RUN_PREFIX, event_run_id
from agent_runtime.inbound import TriggerEvent, run_id_for
from agent_runtime.record import EVAL_RUN_PREFIX, RunRecord, RunStatus, new_run_id
from agent_runtime.stores import LocalStore, RunStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HEX = st.text("0123456789abcdef", min_size=1, max_size=32)


def shaped(run_id: str, prefix: str) -> bool:
    return re.fullmatch(re.escape(prefix) + f"[0-9a-f]{{{RUN_ID_HEX}}}", run_id) is not None


@settings(max_examples=50)
@given(key=st.text(max_size=80), prefix=st.sampled_from([RUN_PREFIX, EVAL_RUN_PREFIX]))
def test_every_minted_id_has_the_one_format(key: str, prefix: str) -> None:
    minted = [(new_run_id(prefix), prefix), (event_run_id(key), RUN_PREFIX)]
    for run_id, its_prefix in minted:
        assert shaped(run_id, its_prefix) and RUN_ID.fullmatch(run_id), run_id
    assert event_run_id(key) == event_run_id(key)  # a redelivery finds its run


def test_serves_ids_are_the_clis_format() -> None:
    """The worker's id of a trigger event and the CLI's are the same shape (they had 24 and 16 digits)."""
    event = TriggerEvent("api", "api", dedup_key="api:1", text="hi", user="u", thread_id="t", correlation_id="c")
    served, local = run_id_for(event), new_run_id()
    assert len(served) == len(local) and shaped(served, RUN_PREFIX) and shaped(local, RUN_PREFIX)
    assert new_run_id() != local


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(digits=HEX, prefix=st.sampled_from([RUN_PREFIX, EVAL_RUN_PREFIX]))
def test_an_id_of_any_older_length_still_reads(
    digits: str, prefix: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    run_id = prefix + digits
    with tempfile.TemporaryDirectory() as state:
        runs = RunStore(LocalStore(Path(state)))
        runs.save_record(RunRecord(run_id, "flow", "gpt-4o", status=RunStatus.COMPLETED, final_answer="done"))
        assert runs.summary(run_id) is not None and runs.load_record(run_id) is not None
        assert [row.run_id for row in runs.list_runs()] == [run_id]
        monkeypatch.setenv("AGENT_STATE_DIR", state)
        capsys.readouterr()
        assert main(["runs", "show", run_id]) == 0
        assert "done" in capsys.readouterr().out
