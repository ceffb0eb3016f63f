"""A run resumed across invocations — an approval between them — reads as one run in every reader: `runs show`,
`runs chart`, its page, its figures, and the chart attached to its answer (was: that chart drew the last invocation
only). A record that does not read as a run is said, where, in one line, and `--json` still prints it; the
thread's spend today counts every run of the day (was: the newest 1,000)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import time
import urllib.parse
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.events import ApprovalDecided, ApprovalRequested
from agent_runtime.pages import PageLinks, page_for
from agent_runtime.pages.route import PageNotServed, served
from agent_runtime.reading.chart import run_chart
from agent_runtime.reading.figures import figures
from agent_runtime.reading.show import transcript
from agent_runtime.runtime import spend_limit
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.stores.runs import RECORD, RUNS_INDEX, run_partition
from agent_runtime.testing import call, reply
from agent_runtime.workflows.schema import Limits

from tests.approvals_support import approval_value, click, mention
from tests.conftest import make_workflow
from tests.functional.stored_run import RUN_ID, fixture, resumed_run
from tests.store_spy import write
from tests.triggers_support import slack_request


def cli(state: Path, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        patch.setenv("AGENT_STATE_DIR", str(state))
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def turns(svg: str) -> list[int]:
    """The turns the run's own panel (the first) draws."""
    panel = svg.split('<g class="panel"')[1]
    return [int(turn) for turn in re.findall(r'<g class="turn" data-turn="(\d+)"', panel)]


def test_a_resumed_run_reads_as_one_run_in_every_reader(tmp_path: Path) -> None:
    runs = resumed_run(tmp_path)
    run = runs.load_run(RUN_ID)
    assert run is not None and run.invocations == 2
    calls = {call.turn for call in run.model_calls}
    assert len(calls) == 4 and calls == set(turns(run_chart(run)))  # both invocations' turns, one panel
    [asked], [decided] = run.events_of(ApprovalRequested), run.events_of(ApprovalDecided)  # by class
    assert asked.call == decided.call and decided.by == "U0LEAD"
    shown = figures(run, "cli")
    assert shown.model_calls == len(run.model_calls) and shown.approvals == 1 and len(shown.approval_waits) == 1
    assert shown.duration_s == run.duration_s and run.duration_s is not None
    code, printed, _ = cli(tmp_path, "runs", "show", RUN_ID)
    history = runs.load_checkpoint(RUN_ID)
    assert code == 0 and history is not None and printed == transcript(run, history[0].messages) + "\n"
    assert all(f"-- turn {turn} · $" in printed for turn in calls) and "approval asked for restart_service" in printed
    assert "approval: restart_service approved by U0LEAD" in printed and "feedback: U0DANA said good" in printed
    page = page_for(runs, RUN_ID) or ""
    calls_table = page.split("<h3>Model calls</h3>", 1)[1].split("</table>", 1)[0]
    assert calls_table.count("<tr><td>") == len(run.model_calls) and "run-stored-0001.sub1" in page
    code, _, _ = cli(tmp_path, "runs", "chart", RUN_ID, "-o", str(tmp_path / "run.svg"))
    assert code == 0 and (tmp_path / "run.svg").read_text() == run_chart(run)


def test_the_chart_attached_to_a_resumed_runs_answer_draws_every_invocation(system, scripted, ops, tmp_path) -> None:
    ops()
    with (tmp_path / "ops-actions.yaml").open("a") as flow:
        flow.write("report: {chart: true}\n")
    s = system(scripted(call("restart_service", {"service": "payments"}), reply("Restarted payments.")))
    s.post("/slack/events", *slack_request(mention("Ev40", "restart payments", "1763800040.0")))
    assert s.deliver() == ["awaiting_approval"]
    click(s, approval_value(s)[0], "U0DANA")
    assert s.deliver() == ["answered"]
    [upload] = s.apis.named("files.getUploadURLExternal")
    run_id = upload["filename"].removesuffix("-chart.svg")
    [svg] = [body.decode() for body in s.apis.uploads.values() if body.startswith(b"<svg")]
    run = s.worker.process.runs.load_run(run_id)
    assert run is not None and run.invocations == 2
    assert turns(svg) == [1, 2] and svg == run_chart(run)  # the run's, as `runs chart` draws it


def test_a_record_that_does_not_read_as_a_run_is_said_and_printed_as_stored(tmp_path: Path) -> None:
    store = LocalStore(tmp_path)
    damaged = fixture() | {"usage": [1, 2]}
    store.put_latest(run_partition(RUN_ID), RECORD, damaged)
    code, out, err = cli(tmp_path, "runs", "show", RUN_ID)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "the run's record cannot be read (usage: " in err and f"`runs show {RUN_ID} --json` prints it" in err
    code, out, _ = cli(tmp_path, "runs", "show", RUN_ID, "--json")
    assert code == 0 and json.loads(out)["usage"] == [1, 2]  # nothing lost
    assert cli(tmp_path, "runs", "chart", RUN_ID, "-o", str(tmp_path / "x.svg"))[0] == 2
    link = urllib.parse.urlsplit(PageLinks("https://agents.example", "k" * 32).url(RUN_ID, time.time()))
    with pytest.raises(PageNotServed) as refused:  # its page: a server's error, saying no more than that
        served(RUN_ID, dict(urllib.parse.parse_qsl(link.query)), key="k" * 32, store=lambda: store,
               secrets=lambda: [], now=time.time())  # fmt: skip
    assert refused.value.status == 500 and "usage" not in refused.value.reason


def test_the_threads_spend_today_counts_every_run_of_the_day(tmp_path: Path) -> None:
    """Was: the newest 1,000 runs of the thread, so a busy thread's day under-counted."""
    store, now = LocalStore(tmp_path), datetime.now(UTC)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    today = [midnight + (now - midnight) * n / 1_300 for n in range(1_200)]
    for n, started in enumerate([*today, midnight - timedelta(hours=1), midnight - timedelta(days=3)]):
        row = {"run_id": f"run-{n:05d}", "workflow": "ops", "status": "completed", "cost_usd": 0.001,
               "started_at": started.isoformat(), "thread_id": "T-1"}  # fmt: skip
        write(store, f"{RUNS_INDEX}#thread#T-1", f"{row['started_at']}#{row['run_id']}", row)

    class Model:
        name = "gpt-4o"

    workflow = replace(make_workflow(), limits=Limits(max_cost_per_thread_day=5.0))
    limit = spend_limit(workflow, Model(), RunStore(store), "T-1")  # type: ignore[arg-type]
    assert limit is not None
    started = time.monotonic()
    assert limit.thread_spent("run-00000") == pytest.approx(0.001 * 1_199)  # every other run of today
    assert time.monotonic() - started < 10
