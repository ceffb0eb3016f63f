"""The spend limit (issue 34, point 5): limits.max_cost stops a looping run at its limit, give or take one
request, with a last answer made without tools; limits.max_cost_per_thread_day counts the thread's other runs
today; the state is kept so the thread goes on when the limit is raised; a limit on an unpriced model is refused."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_runtime import Services, build_agent
from agent_runtime.errors import ConfigError
from agent_runtime.models import OpenAIChatModel
from agent_runtime.models.prices import prices_for
from agent_runtime.record import RunRecord, RunStatus
from agent_runtime.spend import estimate_next
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.tools import tool
from agent_runtime.workflows import WorkflowError, parse_workflow
from hypothesis import given, settings
from hypothesis import strategies as st

REPO = Path(__file__).resolve().parents[2]


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"{key}: " + "lorem ipsum " * 150  # ~300 tokens a result: each request costs more than the last


def workflow(**limits: Any) -> Any:
    model = {"name": "gpt-4.1", "context_window": 1_047_576, "max_output_tokens": 1024}
    return parse_workflow({"name": "w", "description": "d", "prompt": "You look things up.", "model": model,
                           "limits": {"max_tool_calls": 500, **limits}}, file="w.yaml")  # fmt: skip


def forever(request: ScriptedRequest) -> Any:
    """A model that never stops calling, until it is told it cannot."""
    if request.body.get("tool_choice") == "none":
        return reply("stopped at the limit: looked up what I could")
    return call("lookup", {"key": f"k{request.index}"})


def run(limits: dict[str, Any], runs: RunStore | None = None, thread: str | None = None) -> tuple[RunRecord, int]:
    with ScriptedServer([forever] * 400) as server:
        agent = build_agent(
            workflow(**limits),
            OpenAIChatModel("gpt-4.1", client=server.client()),
            Services(runs=runs, thread_id=thread),
            tools=[lookup],
        )
        return agent.run("look everything up"), len(server.requests)


def largest_request(record: RunRecord) -> float:
    """The engine's estimate of a request at its largest in the run (the last prompt's size, uncached: a fold or a
    masking just before the stop can make the last one much smaller than the one the stop was planned for)."""
    calls = [c for c in record.model_calls if c.get("usage")]
    return max(estimate_next(record.prices, calls[: k + 1]).cost(1024) for k in range(len(calls)))


@settings(max_examples=8, deadline=None)
@given(limit=st.floats(0.02, 0.12))
def test_a_looping_run_stops_at_its_limit_give_or_take_one_request(limit: float) -> None:
    record, _ = run({"max_cost": limit})
    assert record.status is RunStatus.COST_LIMIT
    assert record.final_answer == "stopped at the limit: looked up what I could"
    spent = record.cost_usd() or 0.0
    one_request = largest_request(record)
    assert limit - 3 * one_request <= spent <= limit  # stopped near the limit, and the last answer fitted
    assert record.stop_reason is not None and f"spend limit of ${limit:g} (limits.max_cost)" in record.stop_reason
    assert [e.kind for e in record.events][-1] == "cost_limit"
    assert record.state is not None and record.state.messages[-1]["content"] == record.final_answer


def test_a_thread_has_a_daily_limit_across_its_runs(tmp_path: Path) -> None:
    runs = RunStore(LocalStore(tmp_path))
    first, _ = run({"max_cost": 0.05, "max_cost_per_thread_day": 0.08}, runs, "T-1")
    assert first.status is RunStatus.COST_LIMIT and "limits.max_cost)" in (first.stop_reason or "")
    second, _ = run({"max_cost": 0.05, "max_cost_per_thread_day": 0.08}, runs, "T-1")
    assert second.status is RunStatus.COST_LIMIT and "a day (limits.max_cost_per_thread_day)" in (
        second.stop_reason or ""
    )
    assert (first.cost_usd() or 0) + (second.cost_usd() or 0) <= 0.08
    third, _ = run({"max_cost": 0.05, "max_cost_per_thread_day": 0.08}, runs, "T-1")
    total = sum(r.cost_usd() or 0.0 for r in (first, second, third))
    assert third.status is RunStatus.COST_LIMIT and total <= 0.08
    other, _ = run({"max_cost": 0.05, "max_cost_per_thread_day": 0.08}, runs, "T-2")
    assert other.status is RunStatus.COST_LIMIT and "limits.max_cost)" in (other.stop_reason or "")  # its own day
    spent, _ = run({"max_cost": 0.05}, runs, "T-3")
    over, requests = run({"max_cost_per_thread_day": 0.03}, runs, "T-3")  # the day's budget is gone already
    assert (spent.cost_usd() or 0) > 0.03 and requests == 0 and over.final_answer is None
    assert over.status is RunStatus.COST_LIMIT and "a day" in (over.stop_reason or "")


def test_a_limit_on_a_model_without_a_price_is_refused() -> None:
    with pytest.raises(WorkflowError, match=r"limits\.max_cost: model 'my-local' has no known price"):
        parse_workflow({"name": "w", "description": "d", "prompt": "p", "limits": {"max_cost": 1},
                        "model": {"name": "my-local", "context_window": 8192}}, file="w.yaml")  # fmt: skip
    prices = {"input": 0.1, "cached_input": 0.1, "output": 0.2}
    model = {"name": "my-local", "context_window": 8192, "prices": prices}
    priced = parse_workflow({"name": "w", "description": "d", "prompt": "p", "limits": {"max_cost": 1},
                             "model": model}, file="w.yaml")  # fmt: skip
    assert priced.limits.max_cost == 1
    refused = r"limits\.max_cost: model 'qwen3-8b' has no known price"  # as validate says it
    with ScriptedServer([]) as server, pytest.raises(ConfigError, match=refused):
        build_agent(workflow(max_cost=1), OpenAIChatModel("qwen3-8b", client=server.client()))
    assert prices_for("gpt-4.1") is not None


def test_the_cli_exits_5_and_the_thread_goes_on_when_the_limit_is_raised(tmp_path: Path) -> None:
    folder = tmp_path / "workflows"
    folder.mkdir()
    (folder / "looper.yaml").write_text(
        "name: looper\ndescription: d\nprompt: You look things up.\n"
        "model: {name: gpt-4.1, context_window: 1047576, max_output_tokens: 1024}\n"
        "limits: {max_cost: 0.03}\ntools: {python: ['lookups:lookup']}\n"
    )
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "lookups.py").write_text(
        "from agent_runtime.tools import tool\n\n\n@tool\ndef lookup(key: str) -> str:\n"
        '    """Look a key up.\n\n    Args:\n        key: The key.\n    """\n'
        '    return key + ": " + "lorem ipsum " * 150\n'
    )
    with ScriptedServer([forever] * 400) as server:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))} | {
            "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "AGENT_WORKFLOWS_DIR": str(folder),
            "AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_TOOLS_PATH": str(tmp_path / "tools")}  # fmt: skip

        def cli(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run([sys.executable, "-m", "agent_runtime", "run", "looper", "-q", "--thread", "T-9",
                                   *args], capture_output=True, text=True, env=env, timeout=120)  # fmt: skip

        first = cli("--message", "look everything up")
        assert first.returncode == 5, first.stderr
        assert "stopped at the limit" in first.stdout and "limits.max_cost" in first.stderr
        assert "run looper --thread T-9 --message 'go on', and --max-cost N" in first.stderr  # its thread, named
        calls_before = len(server.requests)
        again = cli("--message", "go on", "--max-cost", "0.06")
        assert again.returncode == 5 and len(server.requests) > calls_before + 1  # it went on, to the new limit
        seen = server.requests[calls_before].messages
        assert any("stopped at the limit" in str(m.get("content")) for m in seen)  # from where it stopped
        assert cli("--message", "x", "--max-cost", "-1").returncode == 2


LIMITED = """\
name: assistant-desk
description: Answers in the app's pane, within a budget.
prompt: You help people in Slack.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
limits: {max_cost: 0.05, max_cost_per_thread_day: 0.03}
tools: {approvers: [U0LEAD]}
triggers:
  slack:
    direct_messages: true
"""


def slack_loop(request: ScriptedRequest) -> Any:
    if request.body.get("tool_choice") == "none":
        return reply("Stopped at the budget: here is what I have.")
    return call("file_read", {"id": f"file-{request.index:012x}"})  # a model that keeps reading


def test_in_slack_the_limit_is_said_and_only_an_approver_can_raise_it(system: Any, tmp_path: Path) -> None:
    from tests.slack_support import pane_message
    from tests.triggers_support import slack_request

    (tmp_path / "assistant-desk.yaml").write_text(LIMITED)
    with ScriptedServer([slack_loop] * 300) as server:
        s = system(server)

        def say(event_id: str, text: str, ts: str, user: str) -> list[str]:
            payload = pane_message(event_id, text, ts, token=True)
            payload["event"]["user"] = user
            s.post("/slack/events", *slack_request(payload))
            return s.deliver()

        assert say("Ev1", "read everything", "1726133801.0", "U0DANA") == ["answered"]
        first = len(server.requests)
        posted = [str(m.get("text")) for m in [*s.apis.named("chat.postMessage"), *s.apis.named("chat.update")]]
        posted += [str(c) for c in s.apis.named("chat.appendStream")]
        assert any("limits.max_cost_per_thread_day" in t and "continue with $N more" in t for t in posted)
        say("Ev2", "continue with $0.05 more", "1726133802.0", "U0DANA")  # not an approver
        # Nothing was granted: what is left of the day's limit pays for a short request and a last answer at most
        # (the reply cap shrinks to what is left; it was the whole cap, twice, before the ledger's reservation).
        assert len(server.requests) - first <= 2
        first = len(server.requests)
        told = [str(m.get("text")) for m in s.apis.named("chat.postEphemeral")]
        assert any("Only the workflow's approvers can raise its spend limit" in t for t in told)
        say("Ev3", "continue with $0.05 more", "1726133803.0", "U0LEAD")
        assert len(server.requests) > first + 1  # it went on, within the new allowance


LIMITED_JIRA = """\
name: ops-desk
description: Answers on OPS tickets, within a budget.
prompt: You help on tickets.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
limits: {max_cost: 0.05, max_cost_per_thread_day: 0.03}
tools: {approvers: [5b10lead]}
triggers:
  jira: {projects: [OPS]}
"""


def test_in_jira_the_limit_is_said_and_only_an_approver_can_raise_it(system: Any, tmp_path: Path) -> None:
    from tests.approvals_support import jira_says
    from tests.triggers_support import jira_request

    (tmp_path / "ops-desk.yaml").write_text(LIMITED_JIRA)
    with ScriptedServer([slack_loop] * 300) as server:
        s = system(server)

        def say(text: str, comment_id: str, author: str) -> list[str]:
            s.post("/jira/webhook", *jira_request(jira_says(text, comment_id, author)))
            return s.deliver()

        def comments() -> list[str]:
            return [json.dumps(c["body"]) for c in s.apis.named("jira.comment")]

        assert say("@agent read everything", "30001", "5b10dana") == ["answered"]
        first = len(server.requests)
        assert any("limits.max_cost_per_thread_day" in c and "continue with $N more" in c for c in comments())
        say("@agent continue with $0.05 more", "30002", "5b10dana")  # not an approver
        # Nothing was granted: what is left of the day's limit pays for a short request and a last answer at most
        # (the reply cap shrinks to what is left; it was the whole cap, twice, before the ledger's reservation).
        assert len(server.requests) - first <= 2
        assert any("Only the workflow's approvers can raise its spend limit" in c for c in comments())
        first = len(server.requests)
        say("@agent continue with $0.05 more", "30003", "5b10lead")
        assert len(server.requests) > first + 1  # it went on, within the new allowance


def test_a_grant_stays_with_its_run_when_it_resumes_and_ends_with_its_turn() -> None:
    from agent_runtime.stores.hook import new_turn

    def resumed(state: Any, granted: float = 0.0) -> RunRecord:
        with ScriptedServer([forever] * 400) as server:
            agent = build_agent(
                workflow(max_cost=0.01),
                OpenAIChatModel("gpt-4.1", client=server.client()),
                Services(granted=granted),
                tools=[lookup],
            )
            return agent.run("go on" if state is not None else "look everything up", state=state)

    first = resumed(None, granted=0.06)
    assert first.status is RunStatus.COST_LIMIT and (first.cost_usd() or 0) > 0.03  # the grant, not the 0.01
    assert first.state is not None
    again = resumed(first.state)  # the same run, in another invocation: the grant is in its state
    assert (again.cost_usd() or 0) > 0.03
    assert again.state is not None
    next_turn = resumed(new_turn(again.state, "run-next"))  # a new turn of the thread: back to the workflow's
    assert (next_turn.cost_usd() or 0) <= 0.01


def test_in_slack_a_workflow_without_approvers_offers_no_grant_and_grants_none(system: Any, tmp_path: Path) -> None:
    """No approver named: the stop says how the limit is raised instead of offering "continue with $N more", and a
    message asking for it grants nothing (a limit anyone in the thread could lift is no limit); its sender is told
    privately how the limit is raised."""
    from tests.slack_support import pane_message
    from tests.triggers_support import slack_request

    (tmp_path / "assistant-desk.yaml").write_text(LIMITED.replace("tools: {approvers: [U0LEAD]}\n", ""))
    with ScriptedServer([slack_loop] * 300) as server:
        s = system(server)

        def say(event_id: str, text: str, ts: str) -> None:
            payload = pane_message(event_id, text, ts, token=True)
            payload["event"]["user"] = "U0DANA"
            s.post("/slack/events", *slack_request(payload))
            s.deliver()

        say("Ev1", "read everything", "1726133801.0")
        first = len(server.requests)
        posted = [str(m.get("text")) for m in [*s.apis.named("chat.postMessage"), *s.apis.named("chat.update")]]
        posted += [str(c) for c in s.apis.named("chat.appendStream")]
        said = " ".join(t for t in posted if "limits.max_cost_per_thread_day" in t)
        assert "workflows/assistant-desk.yaml" in said and "continue with" not in said
        say("Ev2", "continue with $0.05 more", "1726133802.0")
        assert len(server.requests) - first <= 2  # nothing granted: what is left of the day at most
        told = [str(m.get("text")) for m in s.apis.named("chat.postEphemeral")]
        assert any("names no approvers" in t and "limits.max_cost_per_thread_day" in t for t in told), told
