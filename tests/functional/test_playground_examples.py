"""The examples' workflows in the playground on the embedded demo model, walked as a newcomer does after
``AGENT_WORKFLOWS_DIR=examples/workflows AGENT_TOOLS_PATH=examples/tools make playground`` (docs/playground.md),
through the page's own actions: serve's webhook, queue and worker, and the examples' real Python tools.

A newcomer found the reaction → approval flow never appeared: the demo model echoed the thread. A sensible model
reads the request (the workflow's prompt names ``create_issue`` and project PROJ; the message is the report) and
calls the tool, so the approval is asked in the thread; approved, the issue is in the page's JIRA and the answer
gives its key and link; denied, nothing is made and the answer says so."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.service.serve import LocalServer
from agent_runtime.stores import RunStore

from tests.conftest import REPO
from tests.playground_support import act, page_token, playground, until

REPORT = "The export button is broken: clicking Export on the billing page does nothing since Monday."


@pytest.fixture
def served(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(REPO / "examples" / "tools"))
    examples = {path.stem: path.read_text() for path in (REPO / "examples" / "workflows").glob("*.yaml")}
    with playground(tmp_path, examples) as server:
        yield server, page_token(server.url)


def thread(server: LocalServer, ts: str) -> list[dict[str, Any]]:
    assert server.playground is not None
    return server.playground.workspace.thread("C0SUPPORT", ts)


def buttons(message: dict[str, Any]) -> list[str]:
    return [e.get("action_id") for b in message.get("blocks") or [] for e in b.get("elements") or []]


def approval(server: LocalServer, ts: str) -> dict[str, Any]:
    found = until(
        lambda: [m for m in thread(server, ts) if "approval_approve" in buttons(m)], what="the approval's buttons"
    )
    return dict(found[-1])


def reacted(server: LocalServer, token: str, text: str) -> str:
    said = act(server.url, "message", {"channel": "C0SUPPORT", "text": text}, token)
    sent = act(server.url, "react", {"channel": "C0SUPPORT", "ts": said["ts"], "name": "jira"}, token)
    assert sent["sent"]["answer"] == {"status": "queued", "workflow": "jira-from-reaction"}
    return str(said["ts"])


def click(server: LocalServer, token: str, message: dict[str, Any], action: str, user: str) -> None:
    body = {"channel": "C0SUPPORT", "ts": message["ts"], "action_id": action, "user": user}
    act(server.url, "click", body, token)


def answer(server: LocalServer, ts: str, words: str) -> str:
    said = until(
        lambda: [m["text"] for m in thread(server, ts) if m.get("bot_id") and words in str(m.get("text"))],
        what=f"an answer with {words!r}",
    )
    return str(said[-1])


def test_a_jira_reaction_asks_the_reporter_to_approve_the_issue_and_answers_with_its_key_and_link(
    served: Any,
) -> None:
    server, token = served
    ts = reacted(server, token, REPORT)
    asked = approval(server, ts)
    assert "create_issue" in asked["text"]
    click(server, token, asked, "approval_approve", "U0SAM")  # not the one who reacted: told so, privately
    click(server, token, approval(server, ts), "approval_approve", "U0DANA")
    said = answer(server, ts, "created PROJ-")
    assert server.playground is not None
    [issue] = server.playground.workspace.all("issue")
    key, fields = issue["key"], issue["fields"]
    assert (fields["project"]["key"], fields["summary"]) == ("PROJ", "The export button is broken")
    assert "does nothing since Monday" in json.dumps(fields["description"])  # the report, quoted
    assert f"created {key}: " in said and f"/browse/{key}" in said


def test_a_denied_issue_is_not_made_and_the_answer_says_so(served: Any) -> None:
    server, token = served
    ts = reacted(server, token, "Search is slow on the orders page since the upgrade to version 4.2.")
    click(server, token, approval(server, ts), "approval_deny", "U0DANA")
    said = answer(server, ts, "did not run")
    assert "denied" in said and "Do not retry" not in said
    assert server.playground is not None and server.playground.workspace.all("issue") == []


def test_the_other_examples_run_on_the_demo_model_without_showing_its_internals(served: Any) -> None:
    """The digest fired now, a pull request's signed delivery: each answered, no file id or mime type shown."""
    server, token = served
    fired = act(server.url, "fire", {"workflow": "daily-digest", "schedule": "weekdays"}, token)
    assert "queued" in json.dumps(fired)
    delivery = {"action": "opened", "pull_request": {"title": "Retry webhooks with backoff", "user": {"login": "dana"}}}
    hooked = act(
        server.url, "hook", {"workflow": "pr-summary", "event": "pull_request", "body": json.dumps(delivery)}, token
    )
    assert hooked["sent"]["answer"]["status"] == "queued", hooked
    until(lambda: len(server.outcomes) >= 2, timeout=60, what="both runs")
    runs = RunStore(server.store)
    answers = {row.workflow: (runs.load_record(row.run_id) or {}).get("final_answer") for row in runs.list_runs()}
    assert server.playground is not None
    digest = [m["text"] for m in server.playground.workspace.history("C0DIGEST") if m.get("bot_id")]
    for said in [*answers.values(), *digest]:
        assert said and "file-" not in said and "text/plain" not in said and "application/json" not in said
