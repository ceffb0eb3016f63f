"""A turn whose model cannot be opened or whose agent cannot be built (OPENAI_BASE_URL without its scheme, a tool
module whose import fails) ends as other failures do: the apology with the run's id where "Working on it…" was, a
failed run record, the thread free, no traceback. Was: the ConfigError left ``open_model`` outside the handler's
reach, the worker's loop logged a traceback and the mention said "Working on it…" for ever, with no run recorded.

And where the setting is wrong for every run, it is said once at the start: ``serve`` exits 2 with one line, as
``run`` does; the Lambda worker's init refuses (``worker_from_env``).

Real paths: serve's playground (its Slack stands in for Slack) with the real ``open_model``; the worker built as its
Lambda function builds it, on moto; the CLI in a subprocess."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.errors import ConfigError
from agent_runtime.runtime import open_model
from agent_runtime.service.answer import APOLOGY
from agent_runtime.service.setup import worker_from_env
from agent_runtime.stores import RunStore
from aws_lambda_powertools import Logger, Metrics
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.playground_support import HELPER, act, page_token, playground, until
from tests.triggers_support import slack_mention, slack_request

NOT_URLS = ["localhost:1/v1", "127.0.0.1:11434/v1", "ftp://models.example/v1", "localhost:8080"]
TOOLED = HELPER + "tools:\n  python: [broken_tools]\n"
IMPORT_FAILURES = {
    "raises": "raise RuntimeError('no credentials for the billing API')\n",
    "divides": "RATE = 1 / 0\n",
    "imports": "import a_module_nobody_installed\n",
    "syntax": "def broken(:\n",
    "exits": "import sys\nsys.exit(3)\n",
}


def _no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], "a traceback in serve's log"


def _failed_turn(server: Any, text: str) -> tuple[str, dict[str, Any], str]:
    """A mention of the helper through the page: the worker's outcome, the run's record and the thread's reply."""
    before = len(server.outcomes)
    said = act(server.url, "message", {"channel": "C0HELP", "text": text}, page_token(server.url))
    outcome = until(lambda: server.outcomes[before:], what="the worker")[0]
    thread = server.playground.workspace.thread
    replies = until(lambda: [m for m in thread("C0HELP", said["ts"]) if m.get("bot_id")], what="the reply")
    runs = RunStore(server.store)
    [row] = [r for r in runs.list_runs(limit=100) if r.run_id in replies[-1]["text"]]
    record = runs.load_record(row.run_id)
    assert record is not None
    return outcome, record, replies[-1]["text"]


def _assert_apology(outcome: str, record: dict[str, Any], reply: str, error: str) -> None:
    assert outcome == "failed"  # an outcome: the worker's loop caught nothing (it logs a traceback when it does)
    assert record["status"] == "failed" and error in str(record["stop_reason"]), record["stop_reason"]
    assert reply.startswith(APOLOGY.format(run_id=record["run_id"])) and "Working on it" not in reply, reply
    assert "Traceback" not in reply


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(url=st.sampled_from(NOT_URLS))
def test_a_turn_whose_model_cannot_open_ends_in_the_apology_and_a_failed_run(
    tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture, url: str
) -> None:
    with pytest.MonkeyPatch.context() as env, playground(tmp_path_factory.mktemp("s"), {"helper": HELPER}) as server:
        env.setenv("OPENAI_BASE_URL", url)  # changed under a running serve: open_model's own check refuses it
        config = replace(server.worker.process.config, use_demo_model=False)
        for worker in server.workers:  # serve's lanes open the model as serve does, from the environment
            worker.process.models = lambda wf: open_model(wf, config)
        outcome, record, reply = _failed_turn(server, "@agent what changed?")
    _assert_apology(outcome, record, reply, "not an http(s) URL")
    _no_traceback(caplog)


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(failure=st.sampled_from(sorted(IMPORT_FAILURES)))
def test_a_turn_whose_tool_module_fails_to_import_ends_in_the_apology_and_a_failed_run(
    tmp_path_factory: pytest.TempPathFactory, caplog: pytest.LogCaptureFixture, failure: str
) -> None:
    folder = tmp_path_factory.mktemp("t")
    (folder / "tools").mkdir()
    module = f"broken_{failure}"
    (folder / "tools" / f"{module}.py").write_text(IMPORT_FAILURES[failure])
    workflows = {"helper": TOOLED.replace("broken_tools", module)}
    with pytest.MonkeyPatch.context() as env, playground(folder, workflows) as s:
        env.setenv("AGENT_TOOLS_PATH", str(folder / "tools"))
        outcome, record, reply = _failed_turn(s, "@agent what changed?")
    _assert_apology(outcome, record, reply, module)
    _no_traceback(caplog)


def test_the_worker_on_moto_ends_a_turn_whose_model_cannot_open_in_the_apology(system: Any, scripted: Any) -> None:
    s = system(scripted())
    with pytest.MonkeyPatch.context() as env:
        env.setenv("OPENAI_BASE_URL", "localhost:1/v1")
        config = replace(s.worker.process.config, use_demo_model=False)
        s.worker.process.models = lambda wf: open_model(wf, config)
        event = slack_mention("Ev1", ts="1763800001.0", thread_ts="1763800000.000100")
        assert json.loads(s.post("/slack/events", *slack_request(event))["body"])["status"] == "queued"
        assert s.deliver() == ["failed"]  # an outcome: the batch reports no failure, nothing is redelivered
    answers = [u["text"] for u in s.apis.named("chat.update")]
    assert answers and answers[-1].startswith("Sorry — I could not finish this one."), answers
    [row] = s.worker.process.runs.list_runs()
    stored = s.worker.process.runs.load_record(row.run_id)
    assert stored is not None and stored["status"] == "failed" and "not an http(s) URL" in stored["stop_reason"]
    assert s.worker.process.threads.active("slack-T0TEAM-C0REVIEW-1763800000.000100") is None


@pytest.mark.parametrize("url", NOT_URLS[:2])
def test_serve_refuses_a_base_url_without_its_scheme_at_the_start(tmp_path: Path, url: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SLACK_", "JIRA_"))}
    env |= {"AGENT_STATE_DIR": str(tmp_path / "state"), "OPENAI_BASE_URL": url}
    done = subprocess.run([sys.executable, "-m", "agent_runtime", "serve", "--port", "0"], env=env, cwd=REPO,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()
    assert "OPENAI_BASE_URL" in line and "not an http(s) URL" in line, line


def test_the_lambda_worker_refuses_a_base_url_without_its_scheme_at_init(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "localhost:1/v1")
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL='localhost:1/v1': not an http"):
        worker_from_env(Logger(service="test"), Metrics(namespace="AgentRuntimeTest", service="w"))
