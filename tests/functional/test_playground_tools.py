"""A workflow's Python tools reach the playground's Slack and JIRA (issue 54's newcomer: ``KeyError:
'JIRA_BASE_URL'``): they run in serve's process and read the environment, so serve sets there the settings its own
clients use — each service's only where the person set none of its variables, and only while it serves.

Through the real path: a schedule fired as the page fires it, serve's worker runs a script coordinator whose tools
read ``os.environ`` as the examples' do (``examples/tools``), post with slack_sdk and create an issue with JIRA's
REST API; what they made is in the workspace the page shows."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from agent_runtime.playground.environ import SERVICES, Exported
from agent_runtime.stores import RunStore
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.playground_support import HELPER, playground, until

NAMES = [name for names in SERVICES for name in names]
REACH = """\
name: reach
description: Reaches the playground's Slack and JIRA from Python tools.
prompt: Coordinated by code.
coordinator: script
script: reach_tools:reach
model: {name: gpt-4.1-mini, context_window: 128000}
tools:
  python: [reach_tools:seen, reach_tools:post, reach_tools:create_issue]
triggers:
  schedule: {name: now, expression: "cron(0 9 * * ? *)", message: Reach., answer_to: record}
"""
TOOLS = '''
import base64, json, os, urllib.request
from agent_runtime import tool
from slack_sdk import WebClient

from agent_runtime.playground.environ import SERVICES

NAMES = [name for names in SERVICES for name in names]


@tool
def seen() -> str:
    """The settings this tool finds in its environment."""
    return json.dumps({name: os.environ.get(name) for name in NAMES})


@tool
def post(text: str) -> str:
    """Post in #help.

    Args:
        text: What to say.
    """
    client = WebClient(token=os.environ["SLACK_BOT_TOKEN"], base_url=os.environ["SLACK_API_URL"])
    return client.chat_postMessage(channel="C0HELP", text=text)["ts"]


@tool
def create_issue(summary: str) -> str:
    """Create an issue in PROJ.

    Args:
        summary: One line.
    """
    base = os.environ["JIRA_BASE_URL"].rstrip("/")
    auth = base64.b64encode(f"{os.environ['JIRA_EMAIL']}:{os.environ['JIRA_API_TOKEN']}".encode()).decode()
    body = {"fields": {"project": {"key": "PROJ"}, "summary": summary, "issuetype": {"name": "Task"}}}
    request = urllib.request.Request(f"{base}/rest/api/3/issue", data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": f"Basic {auth}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)["key"]


def reach(run):
    found = run.call("seen", step="seen")
    ts = run.call("post", text="merged: #12", step="post")
    key = run.call("create_issue", summary="From a tool", step="issue")
    return json.dumps({"seen": json.loads(found), "ts": ts, "key": key})
'''


def test_a_python_tool_reaches_the_playgrounds_slack_and_jira_as_the_runtimes_clients_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "reach_tools.py").write_text(TOOLS)
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
    for name in NAMES:
        monkeypatch.delenv(name, raising=False)
    with playground(tmp_path, {"helper": HELPER, "reach": REACH}) as server:
        assert server.playground is not None
        triggers = server.playground.triggers
        server.fire_now("reach", "now")
        assert until(lambda: server.outcomes, what="the worker") == ["answered"]
        [row] = RunStore(server.store).list_runs()
        record = RunStore(server.store).load_record(row.run_id)
        assert record is not None, row
        made = json.loads(str(record["final_answer"]))
        # what the tools found is what the runtime's own clients are made with
        assert made["seen"] == {name: triggers.env[name] for name in NAMES}
        assert triggers.slack_api_url == made["seen"]["SLACK_API_URL"]
        assert triggers.jira_base_url == made["seen"]["JIRA_BASE_URL"]
        posted = server.playground.workspace.history("C0HELP")
        assert [m["text"] for m in posted if m.get("ts") == made["ts"]] == ["merged: #12"]
        issue = server.playground.workspace.get("issue", made["key"])
        assert issue is not None and issue["fields"]["summary"] == "From a tool"
    assert not any(name in os.environ for name in NAMES)  # serve's are gone with it


@settings(max_examples=60)
@given(st.dictionaries(st.sampled_from(NAMES), st.text(min_size=1, max_size=8)))
def test_the_persons_own_settings_are_kept_and_the_environment_restored(theirs: dict[str, str]) -> None:
    """Whatever of the variables the person set: a service with any of its own keeps exactly theirs (none mixed
    in), one with none gets every one of the playground's; closing leaves the environment as it was."""
    environ = dict(theirs)
    page = {name: f"page-{name}" for name in NAMES}
    exported = Exported(page, environ)
    for names in SERVICES:
        if any(name in theirs for name in names):
            assert {n: environ.get(n) for n in names} == {n: theirs.get(n) for n in names}
        else:
            assert {n: environ[n] for n in names} == {n: page[n] for n in names}
    exported.close()
    assert environ == theirs
