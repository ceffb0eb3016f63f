"""The demo model calling a tool the person names (C) x a spend limit, x ``eval`` with a stub of that tool, and x
approvals across invocations under serve (the value asked for given in the thread's next message).

Spend limit: a run stops at its limit before the call, or after it with a last answer. Invariant: the tool runs at
most once and only when approved, and the answer says what it did — its result, never "(no result)": the limit's
"answer now" note after the call's result had hidden it from the demo model (it read the latest batch's results
only). Eval: a stub of the named mutating tool keeps the tool's approval rule: the case with ``approve: none``
records a denial (the stub never answers), ``approve: all`` the stub's result.

Real paths: the demo model over HTTP (``demo_script``), the run's spend limit and approval gate; the real CLI's
``eval`` in a subprocess on the embedded demo model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Services
from agent_runtime.approvals.approvers import FixedApprover
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.demo import demo_script
from agent_runtime.tools import tool
from agent_runtime.workflows import parse_workflow
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.conftest import model_for
from tests.demo_support import TOOLS, WORKFLOW, eval_desk

MESSAGE = "post_comment on PAY-812: the fix is in"


def limited(max_cost: float) -> Any:
    data = {"name": "w", "description": "d", "prompt": "You help.", "limits": {"max_cost": max_cost},
            "model": {"name": "gpt-4.1-mini", "context_window": 1047576}}  # fmt: skip
    return parse_workflow(data, file="w.yaml")


@settings(max_examples=12, deadline=None)
@given(max_cost=st.floats(0.001, 0.03), approve=st.booleans())
def test_a_run_at_its_spend_limit_calls_the_named_tool_at_most_once_and_says_what_it_did(
    max_cost: float, approve: bool
) -> None:
    ran: list[dict[str, Any]] = []

    @tool(mutating=True)
    def post_comment(ticket: str, text: str) -> str:
        """Post a comment on a ticket.

        Args:
            ticket: The ticket's key.
            text: The comment.
        """
        ran.append({"ticket": ticket, "text": text})
        return f"posted {ticket}"

    asks = replace(post_comment, approval="mutating")  # as a workflow's own python tool is (tools.approval)
    services = Services(approver=FixedApprover(approve, "the test"))
    with ScriptedServer(demo_script(), model="demo") as server:
        record = build_agent(limited(max_cost), model_for(server), services, tools=[asks]).run(MESSAGE)
    answer = record.final_answer or ""
    assert ran in ([], [{"ticket": "PAY-812", "text": "the fix is in"}]), ran
    assert not ran or approve, ran  # never without the approval
    assert "(no result)" not in answer, answer
    stopped = record.status.value == "cost_limit" and "spend limit" in (record.stop_reason or "")
    if record.final_answer is None:  # no last answer fitted (before the call or after it): the reason says why
        assert stopped, (record.status, record.stop_reason)
    elif ran:
        assert "Done: posted PAY-812" in answer, (max_cost, record.status, answer)
    elif [c for c in record.tool_calls if c["name"] == "post_comment"]:  # asked, and denied
        assert not approve and "post_comment did not run" in answer, answer
    else:  # stopped at the limit before the call, with a last answer
        assert stopped, (record.status, answer)


SUITE = """\
cases:
  - name: comment-{approve}
    message: "post_comment on PAY-812: the fix is in"
    approve: {approve}
    stubs:
      post_comment: "commented on PAY-812 (the stub)"
"""


@pytest.mark.parametrize("approve", ["none", "all"])
def test_an_eval_stub_of_the_named_tool_keeps_its_approval(tmp_path: Path, approve: str) -> None:
    env = eval_desk(tmp_path, SUITE.format(approve=approve))
    report = tmp_path / "report.json"
    result = run_cli("eval", "ticket-triage", "-q", "--json", str(report), env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    [case] = json.loads(report.read_text())["cases"]
    [run] = case["runs"]
    assert not (tmp_path / "tools" / "posted.txt").exists()  # the real tool never runs in an eval
    assert [c["name"] for c in run["tool_calls"]] == ["post_comment"]  # the demo model called the named tool
    if approve == "none":
        assert run["tool_calls"][0]["error"] and "(the stub)" not in run["answer"], run
        assert "denied by the eval case (approve: none)" in run["answer"], run["answer"]
    else:
        assert not run["tool_calls"][0]["error"] and run["answer"] == "Done: commented on PAY-812 (the stub)", run


APPROVED = WORKFLOW + "  approvers: [requester]\ntriggers:\n  slack: {direct_messages: true}\n"


def test_under_serve_the_reply_with_the_value_asks_approval_and_the_decision_runs_the_call_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """C x approvals across invocations (serve, the playground's HTTP API): the ask, the reply with the value in the
    thread, the approval card, the decision arriving as its own message (clicked twice), the run resuming: the
    tool runs once, with both messages' values."""
    from tests.playground_support import act, page_token, playground, until

    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "payments_tools.py").write_text(TOOLS)
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
    posted = tmp_path / "tools" / "posted.txt"
    with playground(tmp_path, {"ticket-triage": APPROVED}) as server:
        token = page_token(server.url)
        thread = lambda: list(server.playground.workspace.thread("D0AGENT", ts))  # noqa: E731
        ts = str(act(server.url, "message", {"channel": "D0AGENT", "text": "post_comment on PAY-812"}, token)["ts"])
        until(lambda: any("I did not call post_comment" in str(m.get("text")) for m in thread()), what="the ask")
        act(server.url, "message", {"channel": "D0AGENT", "text": "text: the fix is in", "thread_ts": ts}, token)
        card = lambda: [m for m in thread() if "approval_approve" in json.dumps(m.get("blocks") or [])]  # noqa: E731
        [asked] = until(card, what="the approval card")
        for _ in range(2):  # a second click on the same card: the decision is taken once
            act(server.url, "click", {"channel": "D0AGENT", "ts": asked["ts"], "action_id": "approval_approve"}, token)
        until(lambda: any("Done: commented on PAY-812" in str(m.get("text")) for m in thread()), what="the answer")
        assert server.drain(10)  # the second click's message handled too, before the file is read
    assert posted.read_text() == "PAY-812: the fix is in\n"
