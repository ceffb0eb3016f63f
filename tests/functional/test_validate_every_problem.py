"""`workflows validate` says every problem of a file at once, one line each, and a slip of a name with the name
meant: whichever of a wrong `name:`, a missing `model.context_window`, a misspelt key, a misspelt built-in tool
and a misspelt Python tool (or its module) a file has together. Was: the first problem alone (a wrong name hid
behind a schema error, a tool behind both), and no "did you mean" for a Python tool."""

from __future__ import annotations

import difflib
import itertools
from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.cli.workflows import UNCHECKED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.slips_support import slips

TOOLS = '''\
from agent_runtime import tool


@tool
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    return service


@tool
def read_metrics(service: str) -> str:
    """Read a service's metrics.

    Args:
        service: Its name.
    """
    return service
'''
_FILES = itertools.count()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    wrong_name=st.booleans(),
    no_window=st.booleans(),
    key=st.none() | slips("limits"),
    builtin=st.none() | slips("slack_thread"),
    function=st.none() | slips("restart_service"),
    module=st.none() | slips("ops_tools"),
)
def test_every_problem_of_a_file_is_said_at_once_and_each_slip_with_the_name_meant(
    wrong_name: bool,
    no_window: bool,
    key: str | None,
    builtin: str | None,
    function: str | None,
    module: str | None,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "tools").mkdir(exist_ok=True)
    (tmp_path / "tools" / "ops_tools.py").write_text(TOOLS)
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
    name = f"wf{next(_FILES)}"
    python = [f"ops_tools:{function or 'restart_service'}", *([f"{module}:read_metrics"] if module else [])]
    window = "" if no_window else ", context_window: 128000"
    (tmp_path / f"{name}.yaml").write_text(
        f"name: {'someone-else' if wrong_name else name}\ndescription: d\nprompt: p\n"
        f"model: {{name: gpt-4.1-mini{window}}}\n{key or 'limits'}: {{max_tool_calls: 3}}\n"
        f"tools: {{builtin: [{builtin or 'slack_thread'}], python: [{', '.join(python)}]}}\n"
    )
    code = main(["workflows", "validate", "--offline", str(tmp_path / f"{name}.yaml")])
    said = [line for line in capsys.readouterr().err.splitlines() if "warning" not in line]
    expected = {  # each problem the file has: a line that says it
        "name: must equal the file name": wrong_name,
        "model.context_window: is required": no_window,
        f"{key}: unknown key; did you mean 'limits'?": key is not None,
        f"unknown built-in tool {builtin!r}; did you mean 'slack_thread'?": builtin is not None,
    }
    if builtin is None:  # a tools section with a problem of its own is not imported: the pass says more may follow
        meant = difflib.get_close_matches(function or "", ["restart_service", "read_metrics"], n=1, cutoff=0.6)
        expected[f"ops_tools has no {function!r}; did you mean {meant[0]!r}?" if meant else "?"] = function is not None
        expected[f"cannot import {module!r} (No module named {module!r}); did you mean 'ops_tools'?"] = bool(module)
    else:
        expected[UNCHECKED] = True  # said, last
    wanted = [text for text, present in expected.items() if present]
    assert code == (2 if wanted else 0)
    assert len(said) == len(wanted), said  # one line each, and none else
    for text in wanted:
        assert any(text in line and line.startswith(str(tmp_path / f"{name}.yaml")) for line in said), (text, said)
