"""The examples' workflows in the playground on the embedded demo model, walked as a newcomer does after
``AGENT_WORKFLOWS_DIR=examples/workflows AGENT_TOOLS_PATH=examples/tools make playground`` (docs/playground.md),
through the page's own actions: serve's webhook, queue and worker, and the examples' real Python tools.

A newcomer found the reaction → approval flow never appeared: the demo model echoed the thread. A sensible model
reads the request (the workflow's prompt names ``create_issue`` and project PROJ; the message is the report) and
calls the tool, so the approval is asked in the thread; approved, the issue is in the page's JIRA and the answer
gives its key and link; denied, nothing is made and the answer says so.

It found too that the digest searched with the schedule's words ("I could not find an answer… terms: write, today,
digest"), a pull request's delivery was reviewed as a document ("Review of delivery.json: Close to ready"), and a
log pasted with a question was "could not read any of the documents". Each example now has a test that its answer
says what its input holds, across drawn inputs: the tickets the prompt's JQL finds (and not another project's), the
pull request's title, author, counts and description, the pasted log's first error."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.service.serve import LocalServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.playground_support import act, new_answer, page_token, playground, repo_workflows, run_ids, until

REPORT = "The export button is broken: clicking Export on the billing page does nothing since Monday."
WORD = st.sampled_from(["export", "billing", "retry", "Webhook", "queue", "login", "timeout", "cache", "v2", "slow"])
PHRASE = st.lists(WORD, min_size=2, max_size=6).map(" ".join)
ONCE = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))


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


def test_the_digest_lists_the_tickets_its_prompts_jql_finds_and_says_when_there_is_nothing(served: Any) -> None:
    """The prompt's JQL (project = PROJ …) is the search, not the schedule's words: each PROJ ticket made on the
    page is in the digest posted to its channel, another project's is not; before any, it says there is nothing."""
    server, token = served
    assert server.playground is not None
    workspace = server.playground.workspace

    def fired() -> str:
        """The digest's answer, once its channel shows it."""
        before = run_ids(server)
        time.sleep(1.05)  # a second click in the same second is the same tick
        sent = act(server.url, "fire", {"workflow": "daily-digest", "schedule": "weekdays"}, token)
        assert "queued" in json.dumps(sent)
        said = new_answer(server, before, "daily-digest")
        head = said.splitlines()[-1]
        until(lambda: any(head in str(m.get("text")) for m in workspace.history("C0DIGEST")), what="the digest posted")
        return said

    assert "Nothing to report today" in fired()
    made: dict[str, str] = {}

    @ONCE
    @given(ours=st.lists(PHRASE, min_size=1, max_size=3), theirs=PHRASE)
    def digest_holds_the_tickets(ours: list[str], theirs: list[str]) -> None:
        for summary in ours:
            made[act(server.url, "ticket", {"project": "PROJ", "summary": summary}, token)["key"]] = summary
        other = act(server.url, "ticket", {"project": "OPS", "summary": theirs}, token)["key"]
        said = fired()
        for key, summary in made.items():
            assert f"{key}: {summary}" in said, (key, said)
        assert other not in said and "could not find" not in said

    digest_holds_the_tickets()


PR = st.fixed_dictionaries(
    {
        "title": PHRASE,
        "login": st.from_regex(r"[a-z][a-z0-9-]{2,12}", fullmatch=True),
        "body": st.one_of(st.just(""), st.tuples(PHRASE, st.sampled_from(["src/retry.py", "docs/api.md", ""]))),
        "changed_files": st.integers(1, 400),
        "commits": st.integers(0, 30),
    }
)


def test_a_pull_requests_delivery_is_summarised_from_its_fields(served: Any) -> None:
    """pr-summary's answer quotes the delivery's title and author, its counts, its description's sentence and the
    paths it names, and says what it does not mention; never a document review of delivery.json."""
    server, token = served

    @ONCE
    @given(pr=PR)
    def summarised(pr: dict[str, Any]) -> None:
        words, path = pr["body"] or ("", "")
        body = f"{words.capitalize()} in {path}." if path else (f"{words.capitalize()}." if words else "")
        pull = {"title": pr["title"], "user": {"login": pr["login"]}, "body": body or None, "number": 7}
        pull |= {"changed_files": pr["changed_files"], "commits": pr["commits"], "id": 991}
        delivery = {"action": "opened", "pull_request": pull, "sender": {"login": "someone-else"}}
        before = run_ids(server)
        sent = act(
            server.url, "hook", {"workflow": "pr-summary", "event": "pull_request", "body": json.dumps(delivery)}, token
        )
        assert sent["sent"]["answer"]["status"] == "queued", sent
        said = new_answer(server, before, "pr-summary")
        assert f"“{pr['title']}” by {pr['login']}" in said and f"{pr['changed_files']:,} changed files" in said
        assert (body in said) if body else "no description" in said
        assert (f"Look at first: {path}" in said) if path else "names no file" in said
        assert ("docs" in said.split("Seems missing:")[-1]) is (path != "docs/api.md")
        assert "Review of" not in said and "someone-else" not in said

    summarised()


def pasted_log(first: int, failure: str, errors: int) -> str:
    """A pasted log: requests that went well, then from line ``first`` on errors saying ``failure`` (the message's
    line ``first + 1``: its question is line 1)."""
    lines = ["# pasted from #incidents"]
    for n in range(2, 160):
        at = f"2026-11-20T14:{n // 60:02d}:{n % 60:02d}Z"
        failing = first <= n < first + errors
        lines.append(
            f"{at} ERROR api {failure} order=ord-{n:05d}" if failing else f"{at} INFO  api ok order=ord-{n:05d}"
        )
    return "\n".join(lines)


def test_a_question_with_a_pasted_log_in_a_direct_message_is_answered_from_the_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """document-feedback's first answer to a direct message holding a question and a pasted log gives the log's
    first error, its line and how many followed, instead of "I could not read any of the documents"."""
    with playground(tmp_path, repo_workflows(tmp_path, "document-feedback")) as server:
        token = page_token(server.url)

        @ONCE
        @given(question=PHRASE, first=st.integers(20, 120), failure=PHRASE, errors=st.integers(1, 30))
        def answered(question: str, first: int, failure: str, errors: int) -> None:
            before = run_ids(server)
            text = f"{question.capitalize()}, what went wrong?\n{pasted_log(first, failure, errors)}"
            act(server.url, "message", {"channel": "D0AGENT", "text": text}, token)
            said = new_answer(server, before, "document-feedback")
            assert f"The first error is at line {first + 1}: " in said and f"ERROR api {failure} order=" in said, said
            assert (
                f"{errors} error line(s)" in said and "could not read" not in said
            )  # counted whole: the paste is in the message

        answered()
