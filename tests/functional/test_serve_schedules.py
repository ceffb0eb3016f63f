"""``agent-runtime serve``'s schedules (issue 51, class 7; issue 50): two workflows' unnamed ``schedule-1`` at the
same minute both fire (the tick's id names its workflow); a schedule that cannot compute its next time — one
validation would refuse, put in place behind its back — is logged and skipped while every other workflow's ticks
go on firing, window after window; and serve logs a line for each fired schedule and each handled message with its
run's id and outcome, never the prompt's text. Real threads, the local queue and store, the demo model. And
``workflows validate`` says each hole the red team found in a line, never a traceback."""

from __future__ import annotations

import io
import json
import logging
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.service.serve import LocalServer
from agent_runtime.stores import RunStore
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.workflows.schedules import Schedule

from tests.conftest import REPO

FLOW = """\
name: {name}
description: Writes a digest.
prompt: You write digests.
model: {{name: gpt-4o, context_window: 128000, max_output_tokens: 1024}}
triggers:
  schedule: {{expression: 'rate(1 minute)', message: Write the secret-free digest now.}}
"""


def json_lines(stream: io.StringIO) -> list[dict[str, object]]:
    return [json.loads(line) for line in stream.getvalue().splitlines() if line.startswith("{")]


def test_same_named_schedules_of_two_workflows_both_fire_and_a_broken_one_stops_none(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("alpha", "beta", "broken"):
        (tmp_path / f"{name}.yaml").write_text(FLOW.format(name=name))
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=True, sandbox_mode="off")  # fmt: skip
    server = LocalServer(runtime, TriggerConfig.from_env({}), port=0)
    broken = next(w for w in server.workflows if w.name == "broken")  # sorted first: its fault comes first
    bad = replace(broken.triggers, schedules=(Schedule("every-zero", "rate(0 minutes)", message="x"),))
    server.workflows = [replace(broken, triggers=bad), *(w for w in server.workflows if w is not broken)]
    start = datetime(2026, 11, 27, 8, 59, 50, tzinfo=UTC)
    times = iter([start + timedelta(seconds=15 * n) for n in range(6)])  # two minutes' ticks: 09:00, 09:01
    server.clock = lambda: next(times, start + timedelta(seconds=75))
    server.tick_every = 0.02
    logs = {name: io.StringIO() for name in ("tick", "worker")}
    server.tick_log.registered_handler.setStream(logs["tick"])  # type: ignore[attr-defined]
    for worker in server.workers:  # each lane logs on its own logger: two schedules' ticks run at once
        worker.process.log.registered_handler.setStream(logs["worker"])  # type: ignore[attr-defined]
    with caplog.at_level(logging.ERROR, logger="agent_runtime.triggers.schedules"):
        server.start()
        try:
            deadline = time.monotonic() + 60
            while len(server.outcomes) < 4 and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.2)  # nothing more comes: the clock stands still
        finally:
            server.close()
    assert server.outcomes == ["answered"] * 4
    runs = RunStore(server.store).list_runs(limit=10)
    assert sorted(str(r.workflow) for r in runs) == ["alpha", "alpha", "beta", "beta"]
    fired = [(line["workflow"], line["schedule"], line["at"]) for line in json_lines(logs["tick"])
             if line["message"] == "schedule fired"]  # fmt: skip
    minutes = ("2026-11-27T09:00:00Z", "2026-11-27T09:01:00Z")
    assert sorted(fired) == [(name, "schedule-1", at) for name in ("alpha", "beta") for at in minutes]
    handled = [line for line in json_lines(logs["worker"]) if line["message"] == "message handled"]
    assert sorted(str(line["run_id"]) for line in handled) == sorted(str(r.run_id) for r in runs)
    assert {line["outcome"] for line in handled} == {"answered"}
    skipped = [r.getMessage() for r in caplog.records if "every-zero" in r.getMessage()]
    assert skipped and all("broken" in line and "skipped" in line for line in skipped)
    said = logs["tick"].getvalue() + logs["worker"].getvalue()
    assert "secret-free digest" not in said  # the prompt's text is never logged


def test_workflows_validate_says_each_schedule_hole_in_a_line(tmp_path: Path) -> None:
    """Was: ``rate(0 minutes)`` passed (then divided by zero in ``workflows list`` and serve's tick), and a step of
    ``00`` or a 300-character time zone raised a traceback out of ``workflows validate``."""
    from tests.cli_support import run_cli

    flow = tmp_path / "holes.yaml"
    flow.write_text(
        "name: holes\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\ntriggers:\n"
        "  schedule:\n"
        "    - {name: zero, expression: 'rate(0 minutes)', message: a}\n"
        "    - {name: step, expression: 'cron(0/00 9 * * ? *)', message: b}\n"
        f"    - {{name: zone, expression: 'rate(1 day)', timezone: {'A' * 300}, message: c}}\n"
        "    - {name: digit, expression: 'cron(\u00b2 9 * * ? *)', message: d}\n"
    )
    result = run_cli("workflows", "validate", str(flow))
    assert result.returncode == 2 and "Traceback" not in result.stderr + result.stdout
    lines = result.stderr.splitlines()
    for key, said in (("[0].expression", "from 1 to 999999"), ("[1].expression", "a step must be a whole number"),
                      ("[2].timezone", "must be an IANA time zone"), ("[3].expression", "must be ASCII")):  # fmt: skip
        assert any(f"triggers.schedule{key}: " in line and said in line for line in lines), (key, result.stderr)
    listed = run_cli("workflows", "list", env={"AGENT_WORKFLOWS_DIR": str(tmp_path)})
    assert "Traceback" not in listed.stderr + listed.stdout
