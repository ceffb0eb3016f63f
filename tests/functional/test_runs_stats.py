"""`runs stats` under real data: every run of the period however many (was: the first 1,000, reported as if all),
a damaged record skipped and counted (was: the whole report lost), and any --since either a report or one line
with exit 2 (was: an OverflowError traceback for 1000000d)."""

from __future__ import annotations

import contextlib
import io
import json
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.cli import main
from agent_runtime.errors import ConfigError
from agent_runtime.reading.stats import since
from agent_runtime.stores import LocalStore
from agent_runtime.stores.runs import RECORD, RUNS_INDEX, run_partition
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.store_spy import write

RUNS = 3_000
NOW = datetime.now(UTC)


def stored_runs(root: Path) -> LocalStore:
    """3,000 runs of the last 3,000 minutes at $0.001 each, two of them damaged, and one from a month ago."""
    store = LocalStore(root)
    for number in range(RUNS + 1):
        run_id = f"run-{number:05d}"
        started = (NOW - timedelta(minutes=number + 1 if number < RUNS else 60 * 24 * 30)).isoformat()
        record = {"run_id": run_id, "workflow": "ops", "status": "completed", "cost_usd": 0.001,
                  "usage": {"prompt_tokens": 10, "total_tokens": 12}, "started_at": started}  # fmt: skip
        write(store, run_partition(run_id), RECORD, record)
        write(store, RUNS_INDEX, f"{started}#{run_id}", {"run_id": run_id, "started_at": started})
    store._item(run_partition("run-00100"), RECORD).write_text("{cut sh")  # damaged on disk
    write(store, run_partition("run-02000"), RECORD, {"workflow": "ops", "usage": [1, 2], "status": "completed"})
    return store


def stats(*args: str) -> tuple[int, str, str]:
    """The command in process (3,000 runs read in a second or two, without a process's start on top)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["runs", "stats", *args])
    return code, out.getvalue(), err.getvalue()


def test_every_run_of_the_period_is_counted_and_the_unreadable_ones_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stored_runs(tmp_path / "state")
    monkeypatch.setenv("AGENT_STATE_DIR", str(tmp_path / "state"))
    code, out, err = stats("--since", "7d", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert (report["runs"], report["unreadable"], report["limited_to"]) == (RUNS - 2, 2, None)
    [group] = report["groups"]
    assert group["cost_usd"] == pytest.approx(0.001 * (RUNS - 2))
    code, out, err = stats("--since", "7d", "--limit", "1000")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("1000 run(s) since") and "only the newest 1000 (--limit): the period has more" in lines
    assert "1 run(s) could not be read (their records are damaged or gone): not counted" in lines  # run-00100


def spans() -> st.SearchStrategy[str]:
    digits = st.one_of(st.integers(0, 10**20).map(str), st.integers(13, 6_000).map(lambda n: "7" * n))
    zone = st.timedeltas(min_value=-timedelta(hours=23, minutes=59), max_value=timedelta(hours=23, minutes=59))
    moments = st.builds(lambda at, offset: at.replace(tzinfo=timezone(offset)).isoformat(), st.datetimes(), zone)
    return st.one_of(
        st.tuples(digits, st.sampled_from("mhdw")).map("".join),
        moments,
        st.dates().map(str),
        st.text(max_size=40),
        st.sampled_from(
            ["1000000d", "99999999999999999999999999w", "0d", "٣d", "2099-01-01", "0001-01-01T00:00+05:00"]
        ),
    )


@settings(max_examples=100, deadline=None)
@given(text=spans())
def test_any_since_is_a_start_in_the_past_or_a_clear_refusal(text: str) -> None:
    try:
        start = since(text, NOW)
    except ConfigError as error:
        assert "\n" not in str(error) and str(error).startswith("--since ")
    else:
        assert start <= NOW and start.tzinfo is not None


@settings(max_examples=40, deadline=None)
@given(text=spans())
def test_runs_stats_answers_any_since_in_one_line_or_a_report(text: str) -> None:
    """In process (AGENT_STATE_DIR: this test's, empty), so 40 values take a second, not a minute."""
    code, out, err = stats(f"--since={text}")
    if code == 0:
        assert out.startswith("0 run(s) since ") and err == ""
    else:
        assert code == 2 and out == ""
        assert err.startswith("agent-runtime: error: --since ") and err.count("\n") == 1


def test_an_impossible_period_is_one_line_from_the_command(tmp_path: Path) -> None:
    """The real command, in its own process: exit 2 and one line, never a traceback (was: OverflowError)."""
    shown = run_cli("runs", "stats", "--since", "1000000d", env={"AGENT_STATE_DIR": str(tmp_path)})
    assert shown.returncode == 2 and shown.stdout == "" and "Traceback" not in shown.stderr
    assert shown.stderr.startswith("agent-runtime: error: --since ") and shown.stderr.count("\n") == 1


STATUSES = ["completed", "stopped", "failed", "tool_call_limit", "cost_limit", "suspended", "awaiting_approval"]


@settings(max_examples=15, deadline=None)
@given(statuses=st.lists(st.sampled_from(STATUSES), min_size=1, max_size=12))
def test_a_run_a_person_stopped_is_counted_as_stopped_never_as_failed(statuses: list[str]) -> None:
    """Was: ``slack:U0DANA 12 runs, 2 failed`` where those two were stopped by a person. A stop is counted apart
    (``stopped``, in the table and in --json beside the keys it had); every other run that did not complete is a
    failure, as before, and each run is counted once."""
    import tempfile

    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        store = LocalStore(Path(folder))
        for number, status in enumerate(statuses):
            run_id, started = f"run-{number:05d}", (NOW - timedelta(minutes=number + 1)).isoformat()
            record = {"run_id": run_id, "workflow": "ops", "status": status, "started_at": started}
            write(store, run_partition(run_id), RECORD, record)
            write(store, RUNS_INDEX, f"{started}#{run_id}", {"run_id": run_id, "started_at": started})
        patch.setenv("AGENT_STATE_DIR", folder)
        code, out, err = stats("--json")
        assert code == 0, err
        report = json.loads(out)
        [group] = report["groups"]
        stopped, completed = statuses.count("stopped"), statuses.count("completed")
        assert (group["stopped"], report["stopped"]) == (stopped, stopped)
        assert group["failures"] == len(statuses) - stopped - completed
        assert group["failure_rate"] == round(group["failures"] / len(statuses), 4)
        assert "stopped" not in report["failures_by_reason"]
        code, out, err = stats()
        header, row = out.splitlines()[1:3]
        assert "stopped" in header.split() and row.split()[5] == str(stopped), out


def test_a_cli_run_counts_for_you_by_person_as_its_connections_name_you(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, scripted: Any
) -> None:
    """A CLI run has no trigger event: it records whom it is for (``local:<login>``, the person its tools acting as
    the requester connect as), and `runs stats --by person` counts it there (was: ``(unknown)``)."""
    from agent_runtime.cli.oauth import me
    from agent_runtime.testing import reply

    (tmp_path / "hello.yaml").write_text(
        "name: hello\ndescription: Says hello.\nprompt: You greet.\nmodel: {name: gpt-4o, context_window: 128000}\n"
    )
    model = scripted(reply("Hello."))
    for key, value in {"AGENT_STATE_DIR": tmp_path / "state", "AGENT_WORKFLOWS_DIR": tmp_path, "AGENT_SANDBOX": "off",
                       "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test"}.items():  # fmt: skip
        monkeypatch.setenv(key, str(value))
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["run", "hello", "-m", "hi", "--quiet"]) == 0
    code, out, err = stats("--by", "person", "--json")
    assert code == 0, err
    assert [(row["person"], row["runs"]) for row in json.loads(out)["groups"]] == [(me(), 1)]
    assert me().startswith("local:")
