"""The playground's actions go through the real paths (issue 54): each becomes the request Slack, JIRA, a signed
webhook's sender or the schedules' clock would send, into ``serve``'s own webhook, queue and worker.

How the tests know: the answer each action reports is the webhook's own (``{"status": "queued", "workflow": …}``
is what its routes say once the signature is verified and a workflow matched), the worker's outcome is counted by
``serve`` (``server.outcomes``), the run is in the store with its trigger event, and what the worker said is in
the workspace the Web API keeps. A request signed with another secret is refused by the same route."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import html5lib
import pytest
from agent_runtime.playground.deliver import envelope, slack_signed
from agent_runtime.playground.slack_api import METHODS
from agent_runtime.service.serve import LocalServer
from agent_runtime.stores import RunStore
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.playground_support import DIGEST, HELPER, PRS, TRIAGE, act, page_token, playground, until

TICKETS = """\
name: tickets
description: Drafts tickets from marked messages.
prompt: You draft tickets.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  slack: {channels: [C0SUPPORT], reactions: [jira]}
"""
ALL = {"helper": HELPER, "tickets": TICKETS, "triage": TRIAGE, "prs": PRS, "digest": DIGEST}


@pytest.fixture
def served(tmp_path: Path) -> Any:
    with playground(tmp_path, ALL) as server:
        yield server, page_token(server.url)


def answered(server: LocalServer, count: int) -> list[str]:
    return until(lambda: len(server.outcomes) >= count and [str(o) for o in server.outcomes], what="the worker")


def replies(server: LocalServer, channel: str, ts: str) -> list[dict[str, Any]]:
    assert server.playground is not None
    return server.playground.workspace.thread(channel, ts)


def events(server: LocalServer) -> list[Any]:
    runs = RunStore(server.store)
    return [runs.load_event(row.run_id) for row in runs.list_runs(limit=50)]


def test_a_mention_goes_through_the_webhook_and_the_worker_and_is_answered_in_its_thread(served: Any) -> None:
    server, token = served
    said = act(server.url, "message", {"channel": "C0HELP", "text": "@agent what changed?"}, token)
    assert said["sent"] == {
        "route": "/slack/events",
        "status": 200,
        "answer": {"status": "queued", "workflow": "helper"},
    }
    assert answered(server, 1) == ["answered"]
    [event] = events(server)
    assert (event.source, event.kind, event.user, event.text) == ("slack", "app_mention", "U0DANA", "what changed?")
    assert event.reply_to == {"channel": "C0HELP", "thread_ts": said["ts"]}
    answer = until(lambda: [m for m in replies(server, "C0HELP", said["ts"]) if m.get("bot_id")], what="the answer")
    assert answer[-1]["blocks"][-1]["type"] == "context_actions"  # the feedback buttons
    assert "_Answered by the <http://127.0.0.1" in answer[-1]["text"] and "|what it did>" in answer[-1]["text"]
    # the same route refuses the same event signed with another secret: the page's requests are verified
    event = {"type": "app_mention", "user": "U0DANA", "text": "hi", "ts": "1.000001", "channel": "C0HELP"}
    forged = json.dumps(envelope(event)).encode()
    headers = {"Content-Type": "application/json", **slack_signed(forged, "another")}
    request = urllib.request.Request(f"{server.url}/slack/events", data=forged, method="POST", headers=headers)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 401 and "forged" in refused.value.read().decode()


def test_a_channel_message_without_a_mention_sends_nothing_and_a_reaction_starts_its_workflow(served: Any) -> None:
    """Was (issue 54): a reaction under ``serve`` failed with a traceback, reactions.get having nowhere to go."""
    server, token = served
    said = act(server.url, "message", {"channel": "C0SUPPORT", "text": "The export button is broken"}, token)
    assert said["sent"]["route"] is None  # Slack sends no event for it: the app subscribes to mentions only
    reacted = act(server.url, "react", {"channel": "C0SUPPORT", "ts": said["ts"], "name": "jira"}, token)
    assert reacted["sent"]["answer"] == {"status": "queued", "workflow": "tickets"}
    assert answered(server, 1) == ["answered"]
    [event] = events(server)
    assert event.kind == "reaction_added" and event.attributes["reaction"] == "jira"
    assert server.playground is not None and ("reactions.get", "ok") in server.playground.slack.calls
    assert until(lambda: any(m.get("bot_id") for m in replies(server, "C0SUPPORT", said["ts"])))
    again = act(server.url, "react", {"channel": "C0SUPPORT", "ts": said["ts"], "name": "jira"}, token)
    assert again["sent"]["route"] is None  # already there: Slack sends nothing
    other = act(server.url, "react", {"channel": "C0SUPPORT", "ts": said["ts"], "name": "eyes"}, token)
    assert other["sent"]["answer"]["status"] == "ignored"  # no workflow lists :eyes:


def test_the_pane_offers_its_prompts_and_a_direct_message_is_answered_there(served: Any) -> None:
    server, token = served
    opened = act(server.url, "pane", {}, token)
    assert opened["sent"]["answer"] == {"status": "queued", "workflow": "helper"}
    assert server.playground is not None
    workspace = server.playground.workspace
    prompts = until(lambda: ((workspace.get("pane", "D0AGENT") or {}).get("prompts") or {}).get(""))
    assert prompts == [{"title": "What changed", "message": "What changed this week?"}]
    said = act(server.url, "message", {"channel": "D0AGENT", "text": "What changed this week?"}, token)
    assert said["sent"]["answer"] == {"status": "queued", "workflow": "helper"}
    until(lambda: [str(o) for o in server.outcomes].count("answered") >= 1)
    assert until(lambda: any(m.get("bot_id") for m in replies(server, "D0AGENT", said["ts"])))


def test_a_ticket_and_a_comment_become_jiras_signed_webhooks_and_the_answer_a_comment(served: Any) -> None:
    server, token = served
    made = act(
        server.url, "ticket", {"project": "PROJ", "summary": "Export fails", "description": "Since Monday."}, token
    )
    assert made["key"] == "PROJ-1" and made["sent"]["answer"] == {"status": "queued", "workflow": "triage"}
    assert server.playground is not None
    comments = lambda: server.playground.workspace.get("issue", "PROJ-1")["fields"]["comment"]["comments"]  # noqa: E731
    until(lambda: any(c["author"]["accountId"] == "pg-agent" for c in comments()), what="the agent's comment")
    said = act(server.url, "comment", {"key": "PROJ-1", "text": "Any news?"}, token)
    assert said["sent"]["answer"] == {"status": "queued", "workflow": "triage"}
    until(lambda: sum(c["author"]["accountId"] == "pg-agent" for c in comments()) == 2, what="a second answer")
    assert [e.kind for e in events(server)] == ["comment_created", "issue_created"]  # newest first


FILE_NAMES = st.lists(
    st.one_of(st.sampled_from(["Sam", "Dana", "pg-sam", "U0SAM", "report.pdf"]), st.text(min_size=1, max_size=20)),
    max_size=3,
)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(reporter=st.sampled_from(["U0DANA", "U0SAM"]), names=FILE_NAMES)
def test_an_issues_run_is_for_its_reporter_whatever_its_files_are_named(
    served: Any, reporter: str, names: list[str]
) -> None:
    """The webhook's ``user`` (who the run is for, in ``runs stats --by person``) is the reporter: never the name
    of a file attached to the issue."""
    from agent_runtime.playground.layout import PEOPLE, jira_account
    from agent_runtime.reading.figures import requester_of

    server, token = served
    files = [{"name": name, "data": "aGk="} for name in names]
    body = {"user": reporter, "project": "PROJ", "summary": "Export fails", "files": files}
    key = act(server.url, "ticket", body, token)["key"]
    event = until(lambda: next((e for e in events(server) if e.reply_to.get("issue_key") == key), None))
    assert requester_of(event.source, event.user) == f"jira:{jira_account(PEOPLE[reporter])}"


ANYWHERE = """\
name: anywhere
description: Answers a mention in any channel.
prompt: You answer.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  slack: {channels: ["*"]}
"""


@pytest.mark.parametrize("workflows", [ALL, {**ALL, "anywhere": ANYWHERE}], ids=["named", "with-any-channel"])
def test_each_channels_header_names_the_workflow_a_mention_there_starts(tmp_path: Path, workflows: Any) -> None:
    """What the page says a mention starts in a channel (its header) is what serve's webhook starts for a mention
    there: in a schedule's answer channel, the workflow that takes any channel, or nothing."""
    with playground(tmp_path, workflows) as server:
        token = page_token(server.url)
        assert server.playground is not None
        rooms = server.playground.layout.to_dict()["channels"]
        for room in rooms:
            sent = act(server.url, "message", {"channel": room["id"], "text": "@agent what is new?"}, token)
            answer = sent["sent"]["answer"]
            started = answer.get("workflow") if answer.get("status") == "queued" else None
            assert started == room["mention"], (room, answer)
    digest = next(room for room in rooms if room["id"] == "C0DIGEST")
    assert digest["mention"] == ("anywhere" if "anywhere" in workflows else None)


def test_a_signed_delivery_and_a_schedule_fired_now_start_their_runs(served: Any) -> None:
    server, token = served
    body = json.dumps(
        {"action": "opened", "pull_request": {"title": "Retry with backoff"}, "sender": {"login": "dana"}}
    )
    sent = act(server.url, "hook", {"workflow": "prs", "event": "pull_request", "body": body}, token)
    assert sent["sent"]["answer"] == {"status": "queued", "workflow": "prs"}
    fired = act(server.url, "fire", {"workflow": "digest", "schedule": "daily"}, token)
    assert fired["sent"]["route"] == "queue"
    answered(server, 2)
    assert sorted((e.source, e.text) for e in events(server)) == [
        ("schedule", "Write the digest."),
        ("webhook", "Retry with backoff"),
    ]
    assert server.playground is not None  # the schedule answers in its channel, a message of its own
    assert until(lambda: [m for m in server.playground.workspace.history("C0DIGEST") if m.get("bot_id")])


def test_the_page_is_html5_and_its_actions_need_its_token_its_host_and_its_origin(served: Any) -> None:
    server, token = served
    with urllib.request.urlopen(server.url + "/", timeout=10) as response:
        page = response.read().decode()
        assert "script-src 'self'" in response.headers["Content-Security-Policy"]
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)
    for static in ("/play/static/play.js", "/play/static/play.css"):
        with urllib.request.urlopen(server.url + static, timeout=10) as response:
            assert response.status == 200

    def refused(headers: dict[str, str], body: bytes = b'{"channel": "C0HELP", "text": "hi", "user": "U0DANA"}') -> int:
        request = urllib.request.Request(f"{server.url}/play/ui/message", data=body, headers=headers, method="POST")
        with pytest.raises(urllib.error.HTTPError) as caught:
            urllib.request.urlopen(request, timeout=10)
        return caught.value.code

    assert refused({}) == 403  # no token
    assert refused({"X-Playground-Token": "guessed"}) == 403
    assert refused({"X-Playground-Token": token, "Origin": "http://evil.example"}) == 403
    assert refused({"X-Playground-Token": token, "Host": "evil.example:80"}) == 421  # DNS rebinding
    assert refused({"X-Playground-Token": token}, b"[1, 2]") == 400
    assert refused({"X-Playground-Token": token}, b'{"channel": "C0HELP", "text": "hi", "user": "U0EVE"}') == 400
    assert refused({"X-Playground-Token": token}, b'{"channel": "C0NOPE", "text": "hi", "user": "U0DANA"}') == 400
    assert server.outcomes == []  # nothing reached the worker


def test_a_restart_shows_the_same_threads(tmp_path: Path) -> None:
    with playground(tmp_path, {"helper": HELPER}) as server:
        said = act(server.url, "message", {"channel": "C0HELP", "text": "kept?"}, page_token(server.url))
    with (
        playground(tmp_path, {"helper": HELPER}) as again,
        urllib.request.urlopen(f"{again.url}/play/ui/changes?after=-1", timeout=10) as response,
    ):
        records = json.loads(response.read())["records"]
    assert [r["body"]["text"] for r in records if r["kind"] == "message"] == ["kept?"]
    assert [r["body"]["ts"] for r in records if r["kind"] == "message"] == [said["ts"]]


FIXTURES = REPO.parent / "shared" / "slackreal-fixtures"


@pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"Slack's payloads are not at {FIXTURES}")
def test_what_the_page_sends_carries_every_key_of_slacks_own_payloads(tmp_path: Path) -> None:
    """Slack's recorded payloads (read in place, never copied): the playground's events and clicks have each of
    their keys, the envelope's, the event's and the click's."""
    from agent_runtime.playground import deliver

    def real(name: str) -> dict[str, Any]:
        return json.loads((FIXTURES / f"{name}.json").read_text())

    message = {"channel": "C0HELP", "user": "U0DANA", "text": "<@U0AGENT> hi", "ts": "1.000001"}
    mention = deliver.message_event(message, mentioned=True)
    direct = deliver.message_event({**message, "channel": "D0AGENT", "files": [{"id": "F1"}]}, mentioned=False)
    assert mention is not None and direct is not None
    pairs = [(real("app_mention"), envelope(mention)), (real("message_im_file_share"), envelope(direct)),
             (real("app_home_opened_messages"), envelope(deliver.pane_opened("U0DANA")))]  # fmt: skip
    for theirs, ours in pairs:
        assert set(theirs) - {"enterprise_id"} <= set(ours) and set(theirs["event"]) <= set(ours["event"])
    button = {"type": "button", "action_id": "a", "block_id": "b", "text": {"type": "plain_text", "text": "Go"}}
    click = deliver.block_actions("U0DANA", "Dana", {**message, "blocks": []}, {**button, "value": "v"}, "help")
    envelope_keys, action_keys = set(real("block_actions_envelope")), set(real("block_actions_envelope")["actions"][0])
    assert envelope_keys <= set(click) and action_keys <= set(click["actions"][0])
    assert set(real("block_actions_envelope")["container"]) <= set(click["container"])


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=12,
)
FIELDS = st.sampled_from(["user", "channel", "ts", "text", "name", "thread_ts", "files", "block_id", "action_id",
                          "verdict", "key", "project", "summary", "workflow", "event", "body", "schedule",
                          "labels", "issue_type", "description"])  # fmt: skip # a table: the actions' fields


def valid(server: LocalServer, token: str, action: str) -> dict[str, Any]:
    """A request of ``action`` that would be done (a message to react to, an issue to comment on: made once)."""
    made = server.__dict__.setdefault("_made", {})
    if not made:
        made["ts"] = act(server.url, "message", {"channel": "C0HELP", "text": "a message"}, token)["ts"]
        made["key"] = act(server.url, "ticket", {"project": "OTHER", "summary": "an issue"}, token)["key"]
    return {
        "message": {"channel": "C0HELP", "text": "hello", "thread_ts": made["ts"], "files": []},
        "react": {"channel": "C0HELP", "ts": made["ts"], "name": "eyes"},
        "click": {"channel": "C0HELP", "ts": made["ts"], "block_id": "b", "action_id": "a", "verdict": "good"},
        "pane": {},
        "ticket": {"project": "OTHER", "summary": "s", "files": [{"name": "a.txt", "data": "aGk="}]},
        "comment": {"key": made["key"], "text": "a comment"},
        "hook": {"workflow": "prs", "event": "ping", "body": '{"zen": "Keep it simple."}'},
        "fire": {"workflow": "nope", "schedule": "daily"},
    }[action] | {"user": "U0DANA"}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    action=st.sampled_from(["message", "react", "click", "pane", "ticket", "comment", "hook", "fire"]), data=st.data()
)
def test_any_request_of_the_page_gets_an_answer_never_a_fault(served: Any, action: str, data: st.DataObject) -> None:
    """Whatever a page (or anything holding its token) sends — a request that would be done, with some of its fields
    replaced by any JSON: an answer — done, or refused saying why (400) — never a 500 or a dropped connection."""
    server, token = served
    base = valid(server, token, action)
    changed = data.draw(st.dictionaries(st.sampled_from(sorted(base)), JSON, max_size=2))
    body = json.dumps(base | changed).encode()
    headers = {"X-Playground-Token": token, "Content-Type": "application/json"}
    request = urllib.request.Request(f"{server.url}/play/ui/{action}", data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            answered = json.loads(response.read())
    except urllib.error.HTTPError as error:
        assert error.code == 400, error.read()
        assert json.loads(error.read())["error"]
        return
    assert set(answered) & {"sent", "gone"}


API_FIELDS = st.sampled_from(["channel", "ts", "thread_ts", "text", "blocks", "chunks", "timestamp", "name", "cursor",
                               "limit", "files", "channel_id", "status", "prompts", "title", "user", "filename",
                               "length", "markdown_text"])  # fmt: skip # a table: the methods' arguments


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(sorted(METHODS)), arguments=st.dictionaries(API_FIELDS, JSON, max_size=6))
def test_any_web_api_call_gets_slacks_answer_never_a_fault(served: Any, method: str, arguments: dict[str, Any]) -> None:
    """The Web API answers every call with 200 and ``ok`` (true, or false and Slack's error's name)."""
    server, _ = served
    assert server.playground is not None
    headers = {"Authorization": f"Bearer {server.playground.slack.token}", "Content-Type": "application/json"}
    data = json.dumps({"channel": "C0HELP", "channel_id": "D0AGENT"} | arguments).encode()
    request = urllib.request.Request(
        f"{server.playground.slack.base}{method}", data=data, headers=headers, method="POST"
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = json.loads(response.read())
    assert answer["ok"] is True or (answer["ok"] is False and isinstance(answer["error"], str) and answer["error"])


def test_the_readmes_first_workflow_has_its_channel_and_its_approver_in_the_playground(tmp_path: Path) -> None:
    """The README's first workflow, tried as a newcomer would: its channel is there by a name, and the approver it
    names is a person the page can act as (the one who may approve)."""
    import re

    readme = (REPO / "README.md").read_text()
    workflow = re.search(r"```yaml\n(.*?)```", readme[readme.index("## A first workflow") :], re.S).group(1)  # type: ignore[union-attr]
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "ops_tools.py").write_text(
        "from agent_runtime import tool\n\n\n@tool(mutating=True)\ndef restart_service(service: str) -> str:\n"
        '    """Restart a service.\n\n    Args:\n        service: Its name.\n    """\n    return service\n'
    )
    with pytest.MonkeyPatch.context() as env:
        env.setenv("AGENT_TOOLS_PATH", str(tmp_path / "tools"))
        with (
            playground(tmp_path, {"incident-helper": workflow}) as server,
            urllib.request.urlopen(f"{server.url}/play/ui/state", timeout=10) as response,
        ):
            layout = json.loads(response.read())["layout"]
    room = {"id": "C0123INCIDENTS", "name": "incidents", "listening": ["incident-helper (mentions)"]}
    assert room | {"mention": "incident-helper"} in layout["channels"]  # and a mention there starts it
    assert {"id": "U0123LEAD", "name": "Lead"} in layout["people"] and layout["dm"]["workflow"] == "incident-helper"
