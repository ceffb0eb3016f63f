"""`eval --set` with a key the workflow does not take, or a value it refuses, is bad usage named by its --set
(exit 2, one line, before any case runs): it marked every case FAIL "could not run" and exited 1."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from agent_runtime.cli import main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FLOW = "name: desk\ndescription: d\nprompt: You help.\nmodel: {name: gpt-4.1-mini, context_window: 128000}\n"
KEYS = ["context.context_budget", "limits.max_tool_calls", "model.context_window", "model.max_output_tokens"]


@pytest.fixture
def desk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "desk.yaml").write_text(FLOW)
    (tmp_path / "evals").mkdir()
    (tmp_path / "evals" / "desk.yaml").write_text("cases:\n  - {name: hello, message: hi, expect: {contains: [hi]}}\n")
    for key, value in {"AGENT_WORKFLOWS_DIR": tmp_path / "workflows", "AGENT_STATE_DIR": tmp_path / "state",
                       "AGENT_SANDBOX": "off", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",  # nothing listens
                       "OPENAI_API_KEY": "k", "AGENT_MODEL_MAX_ATTEMPTS": "1"}.items():  # fmt: skip
        monkeypatch.setenv(key, str(value))
    return tmp_path


def wrong(key: str, data: st.DataObject) -> str:
    """``key`` with one character of its last part dropped, or a value of the wrong type."""
    if data.draw(st.booleans()):
        return f"{key}={data.draw(st.sampled_from(['abc', '[1, 2]', '{a: 1}', '-5']))}"
    head, _, last = key.rpartition(".")
    cut = data.draw(st.integers(0, len(last) - 1))
    return f"{head}.{last[:cut]}{last[cut + 1 :]}=16000"


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(KEYS), data=st.data())
def test_a_wrong_set_is_bad_usage_before_any_case_runs(key: str, data: st.DataObject, desk: Path) -> None:
    item = wrong(key, data)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["eval", "desk", "--set", "limits.max_tool_calls=3", "--set", item, "-q"])
    assert code == 2 and out.getvalue() == "", err.getvalue()
    assert err.getvalue().startswith(f"agent-runtime: error: --set {item}: ") and err.getvalue().count("\n") == 1
    assert not (desk / "state").exists() or not any((desk / "state").rglob("*.json"))  # no case ran
    if item.endswith("=16000"):
        assert f"did you mean '{key.rpartition('.')[2]}'?" in err.getvalue() or "unknown key" in err.getvalue()
