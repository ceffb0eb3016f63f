"""`workflows validate` says every problem of a file in one pass, as the README promises: a newcomer's two key
typos, a misspelt skill and a misspelt tool function are said together (the tools imported as a run imports them),
not the keys' first and the tool's once those are fixed. Where the tools section itself does not read, its tools
cannot be checked: the last line says more may follow once these are fixed, and only then."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.cli.workflows import UNCHECKED
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

TOOLS = '''\
from agent_runtime import tool


@tool
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    return service
'''
WORKFLOW = """\
name: incident-helper
description: Answers questions about incidents.
prompt: You help the on-call engineer.
model: {{name: gpt-4.1-mini, context_window: 1047576}}
limits: {{{limits}: 30}}
context: {{{budget}: 32000}}
skills: {{required: [{skill}]}}
tools: {{builtin: [{builtin}], python: ['s18_ops_tools:{function}']}}
"""


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(keys=st.booleans(), function=st.booleans(), skill=st.booleans(), builtin=st.booleans())
def test_every_slip_is_said_in_one_pass_or_the_pass_says_more_may_follow(
    keys: bool,
    function: bool,
    skill: bool,
    builtin: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (tmp_path / "tools").mkdir(exist_ok=True)
    (tmp_path / "tools" / "s18_ops_tools.py").write_text(TOOLS)
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
    path = tmp_path / "incident-helper.yaml"
    path.write_text(
        WORKFLOW.format(
            limits="max_tool_cals" if keys else "max_tool_calls",
            budget="context_budgt" if keys else "context_budget",
            skill="slack-formating" if skill else "slack-formatting",
            builtin="slack_thred" if builtin else "slack_thread",
            function="restart_servce" if function else "restart_service",
        )
    )
    code = main(["workflows", "validate", str(path)])
    said = [line for line in capsys.readouterr().err.splitlines() if ": warning: " not in line]
    expected = {  # each slip present: a line that says it
        "limits.max_tool_cals: unknown key; did you mean 'max_tool_calls'?": keys,
        "context.context_budgt: unknown key; did you mean 'context_budget'?": keys,
        "skills.required: unknown skill 'slack-formating'": skill,
        "unknown built-in tool 'slack_thred'; did you mean 'slack_thread'?": builtin,
        # the tools section with a slip of its own is not imported: the pass says so, last, instead
        "s18_ops_tools has no 'restart_servce'; did you mean 'restart_service'?": function and not builtin,
        UNCHECKED: builtin,
    }
    wanted = [text for text, present in expected.items() if present]
    assert code == (2 if wanted else 0), said
    assert len(said) == len(wanted), said  # one line each, and none else
    for text in wanted:
        assert any(text in line and line.startswith(str(path)) for line in said), (text, said)
    assert not builtin or said[-1].endswith(UNCHECKED), said
