"""The playground in a real browser (issue 54): Debian's headless Chromium (``make browser``) drives the page served
by ``serve``, clicking as a person would — a mention and its streamed answer, feedback, the run page behind the
answer, a reaction that starts a run, an approval (approved by the one who may, refused to the one who may not,
denied), Stop in the middle of a stream, the app's pane and its suggested prompts — with a model served over HTTP
(``OPENAI_BASE_URL``, as a real one is reached), through serve's webhook, queue and worker. The page shows no
console error and its rendered document passes html5lib's strict parse. ``PLAYGROUND_SCREENSHOTS=docs`` writes the
screenshots the docs show."""

from __future__ import annotations

import json
import os
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import html5lib
import pytest
from agent_runtime.service.serve import LocalServer
from agent_runtime.stores import RunStore
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.steps import Paced, Reply, ScriptedCall, ScriptedRequest

from tests.playground_support import DIGEST, HELPER, PRS, TRIAGE, Page, browser, playground, until

TICKETS = """\
name: tickets
description: Drafts a ticket from a message marked with :jira:, once the person who marked it approves.
prompt: You draft tickets.
model: {name: gpt-4.1-mini, context_window: 128000}
tools:
  python: [ticket_tools:create_ticket]
  approvers: [requester]
triggers:
  slack: {channels: [C0SUPPORT], reactions: [jira]}
"""
TOOLS = '''
from agent_runtime import tool


@tool(mutating=True)
def create_ticket(summary: str) -> str:
    """Create a JIRA ticket.

    Args:
        summary: Its one-line summary.
    """
    return f"created PROJ-7: {summary}"
'''
WORDS = " ".join(f"word{n}" for n in range(50))
ANSWER = (
    "Retries back off exponentially (1 s, 2 s, 4 s, at most 5 attempts) with full jitter, so a burst of failures "
    "does not retry in step.\n\n**What to check first:**\n- the idempotency key on each delivery: a retry must not "
    "charge twice\n- the dead-letter queue after the last attempt\n- an alarm on its depth\n\nThe design covers the "
    "first two; the alarm is missing (the open question in section 4)."
)


def respond(request: ScriptedRequest) -> Reply | Paced:
    """The model: a ticket drafted by a tool call (then its result said), an answer written slowly when asked,
    else an answer streamed in word-sized pieces."""
    asked, results = request.last_user_text(), request.tool_results()
    quick = {"You triage.": "Triage: no duplicate found; priority Medium.", "You write digests.": "Digest: all quiet.",
             "You summarise pull requests.": "Summary: retries with backoff."}  # fmt: skip # a table
    said = next((text for start, text in quick.items() if request.system_text().startswith(start)), None)
    if said is not None:  # answers not streamed (a JIRA comment, a run that answers nowhere): no need to wait
        return Reply(text=said)
    if results:
        return Reply(text=f"Done: {next(iter(results.values()))}.")
    if "reacted with :jira:" in asked:
        return Reply(calls=(ScriptedCall("create_ticket", {"summary": "Export is broken"}),))
    if "slowly" in asked:
        return Paced(Reply(text=f"Slowly: {WORDS} {WORDS} {WORDS}"), interval=0.12)
    return Paced(Reply(text=ANSWER), interval=0.04)


@dataclass
class World:
    server: LocalServer
    page: Page
    shots: Path
    model: ScriptedServer
    tools: Path


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("playground")
    (folder / "tools").mkdir()
    (folder / "tools" / "ticket_tools.py").write_text(TOOLS)
    shots = Path(os.environ.get("PLAYGROUND_SCREENSHOTS") or folder / "shots")
    shots.mkdir(parents=True, exist_ok=True)
    workflows = {"helper": HELPER, "tickets": TICKETS, "triage": TRIAGE, "digest": DIGEST, "prs": PRS}
    with (
        ScriptedServer([respond] * 400) as model,
        playground(folder, workflows, demo=False) as server,
        browser(folder / "profile") as chromium,
    ):
        page = chromium.page(server.url + "/")
        page.wait("document.body.dataset.ready === 'true'", what="the page")
        yield World(server, page, shots, model, folder / "tools")


@pytest.fixture(autouse=True)
def _each(world: World, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The model is reached as a real one is, at OPENAI_BASE_URL (each test's environment is its own: the
    suite's fixture clears it); and each test leaves the page's console as clean as it found it."""
    monkeypatch.setenv("OPENAI_BASE_URL", world.model.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-playground-test")
    monkeypatch.setenv("AGENT_TOOLS_PATH", str(world.tools))
    yield
    assert world.page.errors == [], "the page's console"


def shot(page: Page, path: Path) -> None:
    page.eval("document.getElementById('toast').hidden = true")  # a word about the previous step
    page.screenshot(path)


def thread_has(page: Page, text: str, timeout: float = 20.0) -> None:
    page.wait(f"document.querySelector('#thread-messages').innerText.includes({json.dumps(text)})", timeout, text)


def mention(page: Page, room: str, text: str) -> None:
    page.click(f'button[data-room="{room}"]')
    page.fill("#composer-text", text)
    page.click("#composer-send")


def run_of(server: LocalServer, text: str) -> str:
    runs = RunStore(server.store)
    found = [r.run_id for r in runs.list_runs(limit=50) if text in (runs.load_event(r.run_id) or _none()).text]
    assert found, text
    return found[0]


def _none() -> Any:
    return type("NoEvent", (), {"text": ""})()


def test_a_mention_is_answered_by_a_stream_then_rated_and_its_run_page_opens(world: World) -> None:
    server, page, shots = world.server, world.page, world.shots
    mention(page, "C0HELP", "@agent what about retries?")
    partial = "(s => s && s.innerText.includes('Retries back off') && !s.innerText.includes('section 4'))"
    page.wait(f"{partial}(document.querySelector('#thread-messages .stream.streaming'))", what="part of the answer")
    page.wait("!!document.querySelector('#thread-messages .stream.stopped')", what="the stream's end")
    thread_has(page, "section 4")
    page.wait(
        "!document.querySelector('#thread-messages [data-action-id=\"run_stop\"]')", what="the working message gone"
    )
    shot(page, shots / "playground-thread.png")
    page.click('#thread-messages button.feedback[data-verdict="good"]')
    run_id = run_of(server, "what about retries?")
    ratings = until(lambda: RunStore(server.store).feedback(run_id), what="the rating")
    assert [(r.by, r.verdict) for r in ratings] == [("U0DANA", "good")]
    link = page.eval(
        "[...document.querySelectorAll('#thread-messages a')].find(a => a.innerText === 'what it did').href"
    )
    assert link.startswith(f"{server.url}/runs/{run_id}/page?")
    opened = page.browser.page(link)
    opened.wait(f"document.body && document.body.innerText.includes({json.dumps(run_id)})", what="the run page")
    assert opened.errors == []
    opened.close()
    page.front()
    prompt = page.eval(
        "[...document.querySelectorAll('#thread-messages a')].find(a => a.innerText === 'helper workflow').href"
    )
    with urllib.request.urlopen(prompt, timeout=10) as response:  # the footer's other link: the workflow's prompt
        assert "prompt: You help." in response.read().decode()


def test_a_reaction_starts_a_run_whose_tool_waits_for_the_one_who_may_approve(world: World) -> None:
    page, shots = world.page, world.shots
    page.click('button[data-room="C0SUPPORT"]')
    page.fill("#composer-text", "The export button is broken since Monday")
    page.click("#composer-send")
    message = "#messages article.message:last-of-type"
    page.wait(
        f"document.querySelector('{message}') && document.querySelector('{message}').innerText.includes('export')"
    )
    page.click(f"{message} button.react")
    page.click('#picker button[data-name="jira"]')
    page.click(f"{message} button.replies")
    page.wait("!!document.querySelector('#thread-messages [data-action-id=\"approval_approve\"]')", what="the request")
    shot(page, shots / "playground-approval.png")
    page.eval("(() => { const who = document.querySelector('#who'); who.value = 'U0SAM'; "
              "who.dispatchEvent(new Event('change')); })()")  # fmt: skip
    page.click('#thread-messages [data-action-id="approval_approve"]')
    thread_has(page, "Only the workflow's approvers can decide this request.")  # to Sam, privately
    page.eval("(() => { const who = document.querySelector('#who'); who.value = 'U0DANA'; "
              "who.dispatchEvent(new Event('change')); })()")  # fmt: skip
    assert "approvers can decide" not in page.text("#thread-messages")  # Dana does not see what Sam was told
    page.click('#thread-messages [data-action-id="approval_approve"]')
    thread_has(page, "approved by @Dana")
    thread_has(page, "Done: created PROJ-7: Export is broken.")
    assert not page.eval("!!document.querySelector('#thread-messages [data-action-id=\"approval_approve\"]')")


def test_a_denied_request_is_not_run(world: World) -> None:
    page = world.page
    page.click('button[data-room="C0SUPPORT"]')
    page.fill("#composer-text", "Search is slow")
    page.click("#composer-send")
    message = "#messages article.message:last-of-type"
    page.wait(f"document.querySelector('{message}') && document.querySelector('{message}').innerText.includes('slow')")
    page.click(f"{message} button.react")
    page.click('#picker button[data-name="jira"]')
    page.click(f"{message} button.replies")
    page.click('#thread-messages [data-action-id="approval_deny"]')
    thread_has(page, "denied by @Dana")
    thread_has(page, "Done: ERROR: not run")  # the model was told the call was denied


def test_stop_in_the_middle_of_a_stream_ends_the_run(world: World) -> None:
    server, page, _ = world.server, world.page, world.shots
    mention(page, "C0HELP", "@agent answer slowly please")
    page.wait("(s => s && s.innerText.includes('word1'))(document.querySelector('#thread-messages .stream.streaming'))")
    page.click('#thread-messages [data-action-id="run_stop"]')
    page.wait("!document.querySelector('#dialog').hidden", what="Slack's confirmation")
    assert page.text("#dialog-title") == "Stop this run?"
    page.click("#dialog-ok")
    thread_has(page, "The thread keeps its work")
    run_id = run_of(server, "answer slowly please")
    assert until(lambda: RunStore(server.store).list_runs(limit=50)[0].status == "stopped" and run_id)
    assert "word49 word0" not in page.text("#thread-messages")  # stopped before the model finished


def test_the_apps_pane_offers_its_prompts_and_answers_one(world: World) -> None:
    page, shots = world.page, world.shots
    page.click('button[data-room="D0AGENT"]')
    page.wait("!!document.querySelector('#prompts .prompt')", what="the suggested prompts")
    page.click("#prompts .prompt")
    page.wait("document.querySelector('#thread-title').innerText.includes(\"the app's pane\")", what="its thread")
    answered = (
        "(s => s && s.innerText.includes('section 4'))(document.querySelector('#thread-messages .stream.stopped'))"
    )
    page.wait(answered, what="the answer in the pane")
    page.wait("!!document.querySelector('#thread-messages button.feedback')", what="its feedback buttons")
    shot(page, shots / "playground-pane.png")
    rendered = page.eval("'<!DOCTYPE html>' + document.documentElement.outerHTML")
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(rendered)


def test_a_jira_ticket_made_on_the_page_is_shown_with_its_comments(world: World) -> None:
    page, shots = world.page, world.shots
    page.click('#others button[data-view="jira"]')
    page.fill("#jira-summary", "Retries double-charge customers")
    page.fill("#jira-description", "Seen twice since the deploy.")
    page.click("#jira-create")
    page.wait("!!document.querySelector('#jira-issue h3')", what="the issue")
    assert page.text("#jira-issue h3") == "PROJ-1 · Retries double-charge customers"
    page.wait("document.querySelector('#jira-issue').innerText.includes('Triage:')", what="the agent's comment")
    page.fill("#jira-comment", "Any news?")
    page.click("#jira-comment-send")
    page.wait("document.querySelector('#jira-issue').innerText.includes('Any news?')", what="the comment")
    page.wait("document.querySelector('#jira-issue').innerText.includes('Comments (3)')", what="its answer")
    shot(page, shots / "playground-jira.png")


def test_a_schedule_fired_and_a_signed_delivery_sent_from_the_page_start_their_runs(world: World) -> None:
    server, page = world.server, world.page
    page.click('#others button[data-view="schedules"]')
    page.click('#panel button[data-schedule="daily"]')
    page.click('button[data-room="C0DIGEST"]')
    page.wait("document.querySelector('#messages').innerText.includes('Digest: all quiet.')", what="the digest")
    page.click('#others button[data-view="hooks"]')
    page.click('#panel section[data-hook="prs"] button.send')
    run = until(lambda: [r for r in RunStore(server.store).list_runs(limit=50) if r.workflow == "prs"], what="its run")
    assert until(lambda: RunStore(server.store).load_record(run[0].run_id)) is not None
    page.eval("document.querySelector('#deliveries').open = true")
    page.wait("document.querySelector('#delivery-list').innerText.includes('POST /hooks/prs · 200')", what="the log")


def test_what_people_write_is_shown_as_text_never_as_markup(world: World) -> None:
    page = world.page
    hostile = '<img src=x onerror="document.body.dataset.pwned=1"> <javascript:alert(1)|click> *bold*'
    page.click('button[data-room="C0GENERAL"]')
    page.fill("#composer-text", hostile)
    page.click("#composer-send")
    page.wait("document.querySelector('#messages').innerText.includes('onerror')", what="the message, as text")
    assert page.eval("document.body.dataset.pwned === undefined && !document.querySelector('#messages img')")
    assert page.eval("![...document.querySelectorAll('a')].some(a => a.href.startsWith('javascript:'))")
    assert page.eval("[...document.querySelectorAll('#messages strong')].some(s => s.innerText === 'bold')")


def test_a_file_attached_to_a_mention_is_shown_and_read_by_the_run(world: World, tmp_path: Path) -> None:
    page = world.page
    notes = tmp_path / "retry-notes.md"
    notes.write_text("# Retry notes\nBack off with jitter.\n")
    page.click('button[data-room="C0HELP"]')
    page.fill("#composer-text", "@agent what do the notes say?")
    page.attach("#composer-files", notes)
    page.wait("document.querySelector('#composer-names').innerText === 'retry-notes.md'", what="the file chosen")
    page.click("#composer-send")
    page.wait("!!document.querySelector('#thread-messages .files a')", what="the file in the message")
    assert page.text("#thread-messages .files a") == "retry-notes.md"
    page.wait("!!document.querySelector('#thread-messages .stream.stopped')", what="the answer")
    assert world.server.playground is not None and ("files-pri", "ok") in world.server.playground.slack.calls
    asked = [r for r in world.model.requests if "what do the notes say?" in r.last_user_text()]
    assert asked and "retry-notes.md" in json.dumps(asked[0].messages)  # downloaded by the worker, given the model


def test_files_over_the_playgrounds_limit_are_refused_on_the_page_by_name(world: World, tmp_path: Path) -> None:
    """Said before anything is read or sent, naming the file, its size and the limit; the message is kept."""
    page = world.page
    huge = tmp_path / "scan.pdf"
    with huge.open("wb") as sparse:
        sparse.truncate(60 * 1024 * 1024)  # a hole: no disk written
    page.click('button[data-room="C0HELP"]')
    page.fill("#composer-text", "@agent read the scan")
    page.attach("#composer-files", huge)
    page.wait("document.querySelector('#composer-names').innerText === 'scan.pdf'", what="the file chosen")
    page.click("#composer-send")
    page.wait("!document.querySelector('#toast').hidden", what="the refusal")
    said = page.text("#toast")
    assert "scan.pdf (60 MB)" in said and "up to 50 MB of files in a message" in said, said
    assert page.eval("document.querySelector('#composer-text').value === '@agent read the scan'")
