"""``tools_not_called`` counts the calls that ran: one ``approve: none`` denied never ran, so a case saying
"nothing was posted" passes, and its detail says the call was asked; ``tools_called`` is what checks a call was
asked (denied or not). Was: the denied call failed ``tools_not_called`` with "1 call(s)".

Real paths: the real CLI's ``eval`` in a subprocess, the embedded demo model calling the workflow's tool the
message names, a stub of that tool keeping its approval rule (as test_pairs_demo_tool.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.evals.checks import Observed, evaluate
from agent_runtime.evals.expect import Expect, ToolExpect
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.demo_support import eval_desk

SUITE = """\
cases:
  - name: nothing-posted-{approve}
    message: "post_comment on PAY-812: the fix is in"
    approve: {approve}
    stubs:
      post_comment: "commented on PAY-812 (the stub)"
    expect:
      tools_called: [post_comment]
      tools_not_called: [post_comment]
"""


@pytest.mark.parametrize("approve", ["none", "all"])
def test_a_denied_call_is_asked_but_not_called(tmp_path: Path, approve: str) -> None:
    env = eval_desk(tmp_path, SUITE.format(approve=approve))
    report = tmp_path / "report.json"
    run_cli("eval", "ticket-triage", "-q", "--json", str(report), env=env)
    [case] = json.loads(report.read_text())["cases"]
    [run] = case["runs"]
    checks = {c["name"]: (c["passed"], c["detail"]) for c in run["checks"]}
    assert [(c["name"], c["ran"]) for c in run["tool_calls"]] == [("post_comment", approve == "all")], run
    assert checks["called post_comment"][0]  # asked, either way
    if approve == "none":
        assert checks["not called post_comment"] == (True, "1 asked and not run"), checks
    else:
        assert checks["not called post_comment"] == (False, "1 call(s) ran"), checks


call = st.fixed_dictionaries(
    {
        "name": st.sampled_from(["post_comment", "jira_search"]),
        "arguments": st.just({}),
        "error": st.booleans(),
        "ran": st.booleans(),
    }
)


@settings(max_examples=50)
@given(calls=st.lists(call, max_size=6))
def test_not_called_fails_exactly_when_a_call_of_the_tool_ran(calls: list[dict[str, Any]]) -> None:
    expect = Expect(tools_called=(ToolExpect("post_comment"),), tools_not_called=("post_comment",))
    results = {r.name: r for r in evaluate(expect, Observed("completed", "ok", "m", calls))}
    named = [c for c in calls if c["name"] == "post_comment"]
    assert results["not called post_comment"].passed == (not any(c["ran"] for c in named))
    assert results["called post_comment"].passed == bool(named)  # asked: ran or not
