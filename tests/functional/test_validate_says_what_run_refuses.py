"""`workflows validate` says what `run` would refuse, in the same words, before a run fails on it: a coordinator
script's function misspelt (was: ok, then the run exit 2 with no "did you mean"), a limit in dollars on the
AGENT_MODEL of the environment it runs in when that model has no price (was: ok; the run warned "its cost is not
counted" and then refused). `--offline` checks the files alone: Python tools and the script are read from their
source, never imported, so a CI step without their dependencies passes and none of their code runs."""

from __future__ import annotations

import contextlib
import io
import itertools
from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.testing import ScriptedServer, reply
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.slips_support import slips

JOB = '''\
from agent_runtime import tool


def merged_job(run):
    return "merged"


def list_prs(run):
    return "none"


@tool
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    return service
'''
_N = itertools.count()


def said(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools").mkdir()
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
    monkeypatch.setenv("AGENT_WORKFLOWS_DIR", str(tmp_path))
    monkeypatch.setenv("AGENT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("AGENT_SANDBOX", "off")
    monkeypatch.delenv("AGENT_MODEL", raising=False)
    return tmp_path


def script_workflow(folder: Path, module: str, function: str) -> str:
    name = f"job{next(_N)}"
    (folder / f"{name}.yaml").write_text(
        f"name: {name}\ndescription: d\nprompt: p\nmodel: {{name: gpt-4.1-mini, context_window: 128000}}\n"
        f"coordinator: script\nscript: {module}:{function}\n"
    )
    return name


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(function=slips("merged_job"), offline=st.booleans())
def test_a_misspelt_script_function_is_said_by_validate_as_run_says_it(
    function: str, offline: bool, place: Path
) -> None:
    module = f"prjob{next(_N)}"
    (place / "tools" / f"{module}.py").write_text(JOB)
    name = script_workflow(place, module, function)
    line = f"script '{module}:{function}': {module} has no function '{function}'; did you mean 'merged_job'?"
    code, out, err = said(["workflows", "validate", name, *(["--offline"] if offline else [])])
    assert code == 2 and "ok " not in out, err
    assert f"{place / name}.yaml: {line}" in err.splitlines()
    with ScriptedServer([]) as server:  # refused before a model is asked
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        with pytest.MonkeyPatch.context() as patch:
            for key, value in env.items():
                patch.setenv(key, value)
            code, out, err = said(["run", name, "-q", "-m", "hi"])
    assert code == 2 and out == "" and line in err


def test_the_script_function_spelt_right_validates(place: Path) -> None:
    (place / "tools" / "goodjob.py").write_text(JOB)
    name = script_workflow(place, "goodjob", "merged_job")
    for extra in ([], ["--offline"]):
        code, out, err = said(["workflows", "validate", name, *extra])
        assert code == 0 and out.startswith("ok "), err
    name = script_workflow(place, "no_such_jobs", "merged_job")
    for extra in ([], ["--offline"]):
        code, _, err = said(["workflows", "validate", name, *extra])
        assert code == 2 and "script 'no_such_jobs:merged_job': cannot import 'no_such_jobs'" in err


# What only running a module shows: offline, none of it runs (the marker is never written) and the file passes.
RUNS = (
    "import no_such_dependency_here",
    "raise RuntimeError('needs a database')",
    "import sys\nsys.exit(3)",
    "from no_such_dependency_here import *",
)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(top=st.sampled_from(RUNS), function=st.none() | slips("restart_service"), where=st.sampled_from(["", "pkg."]))
def test_offline_reads_the_tools_source_and_runs_none_of_it(
    top: str, function: str | None, where: str, place: Path
) -> None:
    n = next(_N)
    module = f"{where}ops{n}"
    folder = place / "tools" / ("pkg" if where else "")
    folder.mkdir(exist_ok=True)
    marker = place / f"ran{n}"
    if where:  # a package's __init__ is not run either
        (folder / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (folder / f"ops{n}.py").write_text(f"open({str(marker)!r}, 'w').close()\n{top}\n{JOB}")
    name = f"wf{n}"
    (place / f"{name}.yaml").write_text(
        f"name: {name}\ndescription: d\nprompt: p\nmodel: {{name: gpt-4.1-mini, context_window: 128000}}\n"
        f"tools: {{python: ['{module}:{function or 'restart_service'}']}}\n"
    )
    code, _, err = said(["workflows", "validate", name, "--offline"])
    assert not marker.exists()
    star = top.startswith("from")  # a star import may bind any name: a slip is left to the import
    if function is None or star:
        assert code == 0, err
    else:
        assert code == 2
        assert f"tools.python '{module}:{function}': {module} has no '{function}'" in err
    code, _, err = said(["workflows", "validate", name])  # online: imported, as a run imports it
    assert code == 2 and "Traceback" not in err and f"tools.python '{module}:" in err


def test_offline_says_a_syntax_error_and_a_def_that_is_not_a_tool(place: Path) -> None:
    (place / "tools" / "broken.py").write_text(JOB + "def oops(:\n")
    (place / "tools" / "plain.py").write_text(JOB.replace("@tool\n", ""))
    for module, expected in (
        ("broken", f"importing 'broken' failed: {place / 'tools' / 'broken.py'} line {JOB.count(chr(10)) + 1}: "
                   "SyntaxError: invalid syntax"),
        ("plain", "'restart_service' is not a tool; decorate it with @tool"),
    ):  # fmt: skip
        (place / f"{module}-wf.yaml").write_text(
            f"name: {module}-wf\ndescription: d\nprompt: p\nmodel: {{name: gpt-4.1-mini, context_window: 128000}}\n"
            f"tools: {{python: ['{module}:restart_service']}}\n"
        )
        for extra in ([], ["--offline"]):
            code, _, err = said(["workflows", "validate", f"{module}-wf", *extra])
            assert code == 2 and f"tools.python '{module}:restart_service': {expected}" in err, err


PRICED = {"gpt-4.1-mini": True, "gpt-4o-2024-08-06": True, "llama3-8b": False, "qwen3-8b": False}
LIMITS = ("max_cost", "max_cost_per_thread_day", "max_cost_per_workflow_month", None)


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(override=st.none() | st.sampled_from(list(PRICED)), limit=st.sampled_from(LIMITS), prices=st.booleans())
def test_validate_refuses_what_run_refuses_on_agent_models_price_and_says_it_once(
    override: str | None, limit: str | None, prices: bool, place: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Invariant: under any AGENT_MODEL, validate exits 2 exactly when run does, both with the same line, and
    run then warns of nothing (was: a warning that the cost is not counted, then the refusal)."""
    name = f"triage{next(_N)}"
    priced = "prices: {input: 0, cached_input: 0, output: 0}, " if prices else ""
    (place / f"{name}.yaml").write_text(
        f"name: {name}\ndescription: d\nprompt: p\nmodel: {{name: gpt-4.1-mini, {priced}context_window: 128000}}\n"
        + (f"limits: {{{limit}: 1}}\n" if limit else "")
    )
    if override:
        monkeypatch.setenv("AGENT_MODEL", override)
    else:
        monkeypatch.delenv("AGENT_MODEL", raising=False)
    refused = bool(limit and override and not prices and not PRICED[override])
    code, out, err = said(["workflows", "validate", name])
    line = f"limits.{limit}: model '{override}' (AGENT_MODEL) has no known price"
    assert code == (2 if refused else 0), err
    assert (line in err) == refused and ("ok " in out) != refused
    assert said(["workflows", "validate", name, "--offline"])[0] == 0  # the file alone: AGENT_MODEL aside
    with ScriptedServer([reply("done")] * (0 if refused else 1)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "k")
        code, out, err = said(["run", name, "-m", "hi"])
    assert code == (2 if refused else 0), err
    if refused:
        assert out == "" and err.count("has no known price") == 1 and line in err and "warning" not in err
