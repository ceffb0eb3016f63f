"""A Python tool module that cannot be imported is the user's to fix, and is said in one line: whatever its import
raises (a syntax error, an exception at its top level or in a helper it imports, ``sys.exit``, a module it imports
that is not installed), ``workflows validate`` and ``run`` exit 2 with one line naming the file, the line and the
exception, never a traceback."""

from __future__ import annotations

import importlib
import itertools
import subprocess
import sys
from pathlib import Path

import pytest
from agent_runtime.cli import main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.newcomer_support import bare_env, cli, readme_first_workflow

GOOD = '''\
from agent_runtime import tool


@tool
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: The service's name.
    """
    return f"restarted {service}"
'''
WORKFLOW = """\
name: {name}
description: Restarts services.
prompt: You help.
model: {{name: gpt-4.1-mini, context_window: 128000}}
tools:
  python: [{module}:restart_service]
"""
SYNTAX = ("def broken(:", "x = (1,", "return 3", "  indented = 1", "class C: pass pass", "f'{'")
RAISED = (RuntimeError, ValueError, KeyError, ZeroDivisionError, OSError, TypeError, Exception)
# A message may hold anything: newlines, a terminal's escapes, a page of text.
MESSAGES = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=400)
_NAMES = itertools.count()


@st.composite
def failures(draw: st.DrawFn) -> tuple[str, str, int, str | None]:
    """A module's text that fails at import, the exception's name, the line the user should look at and, when
    the failure is in a helper module the tool module imports, that helper's text."""
    before = draw(st.integers(0, 5))
    lines = GOOD.splitlines() + [f"x{i} = {i}" for i in range(before)]
    kind = draw(st.sampled_from(["syntax", "raise", "helper", "exit", "missing", "helper-syntax"]))
    at = len(lines) + 1
    if kind == "syntax":
        bad = draw(st.sampled_from(SYNTAX))
        expected = "IndentationError" if bad.startswith(" ") else "SyntaxError"
        return "\n".join([*lines, bad, "y = 2"]) + "\n", expected, at, None
    if kind == "exit":
        exits = "\n".join([*lines, "import sys", f"sys.exit({draw(st.integers(0, 3))})"]) + "\n"
        return exits, "SystemExit", at + 1, None
    if kind == "missing":
        return "\n".join([*lines, "import no_such_dependency_here"]) + "\n", "ModuleNotFoundError", at, None
    error = draw(st.sampled_from(RAISED))
    raising = f"raise {error.__name__}({draw(MESSAGES)!r})"
    if kind == "raise":  # at the top level, or in a function the top level calls (the raise's line is said)
        if draw(st.booleans()):
            return "\n".join([*lines, raising]) + "\n", error.__name__, at, None
        return "\n".join([*lines, "def setup():", f"    {raising}", "setup()"]) + "\n", error.__name__, at + 1, None
    helper = "x = 1\n" + (f"{raising}\n" if kind == "helper" else "def (:\n")
    name = error.__name__ if kind == "helper" else "SyntaxError"
    # A helper's syntax error is said at the helper's line; an exception at the line importing the helper.
    return "\n".join([*lines, "import {helper}"]) + "\n", name, at if kind == "helper" else 2, helper


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(failure=failures())
def test_any_import_failure_of_a_tool_module_is_one_line_naming_file_line_and_exception(
    failure: tuple[str, str, int, str | None],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    text, exception, line, helper = failure
    n = next(_NAMES)
    module, helper_name = f"ops_tools_{n}", f"ops_helper_{n}"  # a module's name is imported once per process
    (tmp_path / "tools").mkdir(exist_ok=True)
    (tmp_path / "workflows").mkdir(exist_ok=True)
    (tmp_path / "tools" / f"{module}.py").write_text(text.replace("{helper}", helper_name))
    if helper is not None:
        (tmp_path / "tools" / f"{helper_name}.py").write_text(helper)
    (tmp_path / "workflows" / f"wf{n}.yaml").write_text(WORKFLOW.format(name=f"wf{n}", module=module))
    importlib.invalidate_caches()
    monkeypatch.setenv("AGENT_WORKFLOWS_DIR", str(tmp_path / "workflows"))
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))

    assert main(["workflows", "validate", f"wf{n}"]) == 2  # it imports them (--offline reads their source)
    said = capsys.readouterr().err
    assert "Traceback" not in said
    [error] = [row for row in said.splitlines() if "tools.python" in row]  # one line, whatever the message
    failed = helper_name if helper is not None and exception == "SyntaxError" else module
    assert f"{tmp_path / 'tools' / failed}.py line {line}: {exception}" in error, error
    assert error.startswith(f"{tmp_path / 'workflows' / f'wf{n}.yaml'}: tools.python '{module}:restart_service'")
    assert module not in sys.modules  # nothing half-imported is kept: the fixed file is read afresh


def test_the_readmes_syntax_error_is_one_line_from_validate_and_run(tmp_path: Path) -> None:
    """The newcomer's case, in the real CLI: a syntax error appended to the tool module; then fixed, it runs."""
    validate, run = readme_first_workflow(tmp_path)
    tool = tmp_path / "tools" / "ops_tools.py"
    good = tool.read_text()
    tool.write_text(good + "def broken(:\n")
    env = bare_env(AGENT_WORKFLOWS_DIR=str(tmp_path / "workflows"))
    at = f"{tool} line {good.count(chr(10)) + 1}: SyntaxError: invalid syntax"
    for argv in (validate, [*run[:2], "-m", "hi", "--approve", "none"]):
        done = cli(*argv, cwd=tmp_path, env=env)
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        [error] = [row for row in done.stderr.splitlines() if "tools.python" in row]
        assert error.endswith(f"tools.python 'ops_tools:restart_service': importing 'ops_tools' failed: {at}")
    tool.write_text(good.replace("import subprocess", "import subprocess\nraise RuntimeError('no\\nconfig')"))
    done = cli(*validate, cwd=tmp_path, env=env)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert f"{tool} line 2: RuntimeError: no config" in done.stderr
    tool.write_text(good)
    assert cli(*validate, cwd=tmp_path, env=env).returncode == 0


def test_a_tool_module_that_is_not_there_is_still_said_as_not_on_the_path(tmp_path: Path) -> None:
    (tmp_path / "wf.yaml").write_text(WORKFLOW.format(name="wf", module="no_such_tools"))
    done = subprocess.run(
        [sys.executable, "-m", "agent_runtime", "workflows", "validate", "--offline", str(tmp_path / "wf.yaml")],
        capture_output=True, text=True, cwd=tmp_path, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "cannot import 'no_such_tools' (No module named 'no_such_tools'); is it on AGENT_TOOLS_PATH?" in done.stderr
