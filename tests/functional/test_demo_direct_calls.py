"""An engineer's own mutating tool, named in their message ("post_comment on PAY-812: the fix is in"), was never
called by the demo model ("I could not find an answer to that"), so approvals could not be tried offline in a
model-driven workflow. The promise, over drawn tool names, parameter names, values and phrasings, through the demo
model over HTTP: a tool the person names is called once with exactly the values their words give, each of them
words of theirs; a required value they do not give is asked for in the answer, and nothing is called. Then through
the CLI (``--approve all|none``) and the playground's HTTP API (its approval buttons)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.runtime import build_agent
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.assistant import RUNTIME_TOOLS, SEARCHED
from agent_runtime.testing.demo import demo_script
from agent_runtime.testing.direct import PROSE
from agent_runtime.tools.decorator import external_tool
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.conftest import make_workflow, model_for
from tests.labelled_support import labelled
from tests.playground_support import act, page_token, playground, until

PHRASES = {  # a phrasing → whether it gives (the target, the text)
    "{tool} on {key}: {text}": (True, True),
    "use {tool} for {key}: {text}": (True, True),
    'call {tool} with {tp} {key} and {pp} "{text}"': (True, True),
    "please call {tool} with {tp}={key}, {pp}: {text}": (True, True),
    '{tool} {key} "{text}"': (True, True),
    "{tool} on {key} please": (True, False),
    "{tool}: {text}": (False, True),
    "can you run {tool}?": (False, False),
}
TAKEN = RUNTIME_TOOLS | SEARCHED | PROSE | {"on", "for", "with", "call", "use", "please", "can", "you", "run", "and"}
NAME = st.from_regex(r"[a-z]{3,8}(_[a-z]{2,6})?", fullmatch=True).filter(lambda n: n not in TAKEN)
TEXT = st.lists(st.sampled_from(["the", "fix", "is", "in", "shipped", "rolled", "back", "today", "looks", "good"]),
                min_size=1, max_size=6).map(" ".join)  # fmt: skip


def _calls(record: Any, tool: str) -> list[dict[str, Any]]:
    return [
        json.loads(call["function"]["arguments"])
        for m in record.state.messages
        for call in m.get("tool_calls", [])
        if call["function"]["name"] == tool
    ]


@settings(max_examples=25, deadline=None)
@given(
    tool=st.from_regex(r"[a-z]{3,8}_[a-z]{3,8}", fullmatch=True).filter(lambda n: n not in RUNTIME_TOOLS),
    tp=NAME,
    pp=st.sampled_from(sorted(PROSE - {"title", "subject", "headline", "summary"})),
    key=st.from_regex(r"[A-Z]{2,5}-[1-9][0-9]{0,4}", fullmatch=True),
    text=TEXT,
    phrase=st.sampled_from(sorted(PHRASES)),
)
def test_a_tool_the_person_names_gets_the_values_they_give_and_only_those(
    tool: str, tp: str, pp: str, key: str, text: str, phrase: str
) -> None:
    message = phrase.format(tool=tool, tp=tp, pp=pp, key=key, text=text)
    ran: list[dict[str, Any]] = []
    schema = {
        "properties": {tp: {"type": "string", "description": "Which one."}, pp: {"type": "string"}},
        "required": [tp, pp],
    }
    made = external_tool(tool, "Acts on one.", schema, lambda args, _ctx: ran.append(args) or "ok, done")
    with ScriptedServer(demo_script(), model="demo") as server:
        record = build_agent(make_workflow(), model_for(server), tools=[made]).run(message)
    has_key, has_text = PHRASES[phrase]
    if has_key and has_text:
        assert ran == [{tp: key, pp: text}] and _calls(record, tool) == ran, (message, ran)
        assert record.final_answer == "Done: ok, done"
        return
    assert ran == [] and _calls(record, tool) == [], (message, ran)
    said = record.final_answer or ""
    assert f"I did not call {tool}" in said
    assert (f"`{tp}: …`" in said) is not has_key and (f"`{pp}: …`" in said) is not has_text, said


@settings(max_examples=10, deadline=None)
@given(data=st.data(), tool=st.from_regex(r"[a-z]{3,8}_[a-z]{3,8}", fullmatch=True).filter(lambda n: n not in TAKEN))
def test_several_values_in_one_message_each_go_to_their_parameter(data: st.DataObject, tool: str) -> None:
    """A message "post_comment ticket=PAY-816 text=hello" had called it with the ticket "PAY-816 text=hello": each value
    ends where the next parameter's label begins, whatever the order and the labels' style."""
    said = data.draw(labelled(tool))
    ran: list[dict[str, Any]] = []
    made = external_tool(tool, "Acts on one.", said.parameters(), lambda args, _ctx: ran.append(args) or "ok")
    with ScriptedServer(demo_script(), model="demo") as server:
        record = build_agent(make_workflow(), model_for(server), tools=[made]).run(said.message)
    assert ran == [said.values] and _calls(record, tool) == ran, (said.message, ran)


TOOLS = '''\
from pathlib import Path

from agent_runtime import tool


@tool(mutating=True)
def post_comment(ticket: str, text: str) -> str:
    """Post a comment on a ticket.

    Args:
        ticket: The ticket's key, e.g. PAY-1.
        text: The comment.
    """
    with (Path(__file__).parent / "posted.txt").open("a") as posted:
        posted.write(f"{ticket}: {text}\\n")
    return f"commented on {ticket}"
'''
WORKFLOW = """\
name: ticket-triage
description: Triage of the payments team's tickets.
prompt: You help the payments team with their tickets.
model: {name: gpt-4.1-mini, context_window: 1047576}
tools:
  python: [payments_tools:post_comment]
  approvers: [requester]
triggers:
  slack: {direct_messages: true}
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "payments_tools.py").write_text(TOOLS)
    return tmp_path


@pytest.mark.parametrize("approve", ["all", "none"])
def test_the_cli_asks_approval_for_the_named_tool_and_runs_it_only_when_approved(folder: Path, approve: str) -> None:
    (folder / "ticket-triage.yaml").write_text(WORKFLOW)
    env = {"AGENT_TOOLS_PATH": str(folder / "tools"), "AGENT_STATE_DIR": str(folder / "state")}
    message = "post_comment on PAY-812: the fix is in"
    result = run_cli("run", str(folder / "ticket-triage.yaml"), "-q", "-m", message, "--approve", approve, env=env)
    assert result.returncode == 0, result.stderr
    posted = folder / "tools" / "posted.txt"
    if approve == "all":
        assert posted.read_text() == "PAY-812: the fix is in\n"
        assert result.stdout.startswith("Done: commented on PAY-812")
    else:
        assert not posted.exists()
        assert result.stdout.startswith("post_comment did not run:") and "denied" in result.stdout


def test_the_cli_asks_for_a_value_the_message_does_not_give(folder: Path) -> None:
    (folder / "ticket-triage.yaml").write_text(WORKFLOW)
    env = {"AGENT_TOOLS_PATH": str(folder / "tools"), "AGENT_STATE_DIR": str(folder / "state")}
    result = run_cli("run", str(folder / "ticket-triage.yaml"), "-q", "-m", "post_comment on PAY-812", env=env)
    assert result.returncode == 0, result.stderr
    assert "I did not call post_comment" in result.stdout and "`text: …`" in result.stdout
    assert not (folder / "tools" / "posted.txt").exists()


def _dm(server: Any, ts: str) -> list[dict[str, Any]]:
    """The direct message's thread (the approval and the answer are posted in it)."""
    return list(server.playground.workspace.thread("D0AGENT", ts))


def _buttons(message: dict[str, Any]) -> list[str]:
    return [e.get("action_id") for b in message.get("blocks") or [] for e in b.get("elements") or []]


@pytest.mark.parametrize("action", ["approval_approve", "approval_deny"])
def test_the_playground_asks_in_the_thread_and_the_answer_says_what_the_decision_did(
    folder: Path, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(folder / "tools"))
    with playground(folder, {"ticket-triage": WORKFLOW}) as server:
        token = page_token(server.url)
        said = act(
            server.url, "message", {"channel": "D0AGENT", "text": "post_comment on PAY-812: the fix is in"}, token
        )
        ts = str(said["ts"])
        [asked] = until(lambda: [m for m in _dm(server, ts) if "approval_approve" in _buttons(m)], what="the buttons")
        assert "post_comment" in asked["text"] and "PAY-812" in json.dumps(asked["blocks"])
        act(server.url, "click", {"channel": "D0AGENT", "ts": asked["ts"], "action_id": action}, token)
        words = "Done: commented on PAY-812" if action == "approval_approve" else "post_comment did not run"
        until(lambda: any(words in str(m.get("text")) for m in _dm(server, ts)), what=repr(words))
    posted = folder / "tools" / "posted.txt"
    assert (posted.read_text() if posted.exists() else "") == (
        "PAY-812: the fix is in\n" if action == "approval_approve" else ""
    )
