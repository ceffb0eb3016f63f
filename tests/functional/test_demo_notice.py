"""The embedded demo model's notice is said as a model call is about to go out, once per process: a run refused
for its config says only its error, and ``serve`` (one process, a model opened per run) says it once, not per run."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_runtime import demo_model
from agent_runtime import messages as m
from agent_runtime.config import RuntimeConfig
from agent_runtime.models import ModelRequest
from agent_runtime.runtime import open_model
from agent_runtime.workflows import load_workflow

from tests.newcomer_support import bare_env, cli

NOTICE = "using the embedded demo model"
WORKFLOW = "name: helper\ndescription: Helps.\nprompt: You help.\nmodel: {name: gpt-4.1-mini, context_window: 128000}\n"


def test_a_run_refused_for_its_config_does_not_announce_the_demo_model(tmp_path: Path) -> None:
    (tmp_path / "helper.yaml").write_text(WORKFLOW + "tools:\n  python: [nosuch_module:nosuch]\n")
    env = bare_env(AGENT_WORKFLOWS_DIR=str(tmp_path), AGENT_STATE_DIR=str(tmp_path / "state"))
    ran = cli("run", "helper", "-m", "hi", cwd=tmp_path, env=env)
    assert ran.returncode == 2 and "nosuch_module" in ran.stderr, ran.stderr
    assert NOTICE not in ran.stderr, ran.stderr


def test_many_runs_in_one_process_say_it_once_and_only_when_a_call_goes_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo_model, "_told", set())  # a fresh process
    (tmp_path / "helper.yaml").write_text(WORKFLOW)
    workflow = load_workflow("helper", tmp_path)
    config = RuntimeConfig.from_env(bare_env())
    assert config.use_demo_model
    with open_model(workflow, config):
        pass  # opened, never called (a run refused before its first call)
    assert NOTICE not in capsys.readouterr().err
    for _ in range(3):  # as serve's worker opens a model per run
        with open_model(workflow, config) as model:
            model.complete(ModelRequest(messages=[m.user("hello")]))
            model.complete(ModelRequest(messages=[m.user("hello again")]))
    said = capsys.readouterr().err
    assert said.count(NOTICE) == 1 and "CANNED" in said, said
