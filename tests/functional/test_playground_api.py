"""The Slack Web API and the JIRA REST API the playground serves (issue 54), called as the runtime calls them —
slack_sdk's own ``WebClient`` (the runtime's client) and the runtime's repliers over HTTP — and checked against
slack_sdk's own models and Slack's documented limits:

- a message's text: Slack truncates past 40,000 characters (docs.slack.dev/reference/methods/chat.postMessage,
  "Truncating content");
- blocks: at most 50 in a message (docs.slack.dev/reference/block-kit/blocks), a section's text at most 3,000
  characters (docs.slack.dev/reference/block-kit/blocks/section-block), refused as ``invalid_blocks``;
- a stream's ``markdown_text`` chunk: at most 12,000 characters (docs.slack.dev/reference/methods/chat.appendStream),
  refused as ``msg_too_long``;
- suggested prompts: at most 4 (docs.slack.dev/reference/methods/assistant.threads.setSuggestedPrompts);
- ``chat.update`` without ``blocks`` keeps the message's blocks; ``[]`` removes them (chat.update's arguments);
- JIRA Cloud refuses a comment over 32,767 characters.
"""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from agent_runtime.adf import to_adf
from agent_runtime.chat.exceptions import ReplyError
from agent_runtime.chat.replies import JiraReplier, SlackReplier, feedback_blocks, working_blocks
from agent_runtime.service.serve import LocalServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import Block
from slack_sdk.models.messages.chunk import Chunk

from tests.conftest import REPO
from tests.playground_support import playground

CHANNEL, DM = "C0HELP", "D0AGENT"
WORKFLOW = """\
name: helper
description: Answers in a channel.
prompt: You help.
model: {name: gpt-4.1-mini, context_window: 128000}
triggers:
  slack: {channels: [C0HELP], direct_messages: true, suggested_prompts: [Summarise the thread]}
access:
  groups: {sre: {slack_usergroups: [S0SRE]}}
  start: [sre]
"""
QUICK = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalServer]:
    with playground(tmp_path_factory.mktemp("api"), {"helper": WORKFLOW}) as server:
        yield server


@pytest.fixture
def slack(served: LocalServer) -> WebClient:
    assert served.playground is not None
    return WebClient(token=served.playground.slack.token, base_url=served.playground.slack.base)


def person_says(served: LocalServer, text: str, thread_ts: str | None = None) -> str:
    """A person's message, kept as the page keeps one (no event: these tests call the API alone)."""
    assert served.playground is not None
    message = {"type": "message", "channel": CHANNEL, "user": "U0DANA", "text": text}
    return str(served.playground.slack.post(message | ({"thread_ts": thread_ts} if thread_ts else {}))["ts"])


def refused(call: Any, **arguments: Any) -> str:
    with pytest.raises(SlackApiError) as caught:
        call(**arguments)
    return str(caught.value.response["error"])


def test_what_the_runtime_posts_reads_back_in_slacks_shapes(served: LocalServer, slack: WebClient) -> None:
    parent = person_says(served, "<@U0AGENT> help")
    posted = slack.chat_postMessage(
        channel=CHANNEL, thread_ts=parent, text="Working", blocks=working_blocks("Working", "r|t")
    )
    assert posted["channel"] == CHANNEL and posted["message"]["thread_ts"] == parent
    kept = posted["message"]["blocks"]
    assert all(b["block_id"] for b in kept)  # Slack gives each block an id
    assert [Block.parse(b).to_dict() for b in kept] == kept  # slack_sdk's models read them back whole
    slack.chat_update(channel=CHANNEL, ts=posted["ts"], text="Still working")  # no blocks: they stay
    replies = slack.conversations_replies(channel=CHANNEL, ts=parent)
    assert [m["ts"] for m in replies["messages"]] == [parent, posted["ts"]] and replies["has_more"] is False
    assert replies["messages"][0]["reply_count"] == 1 and replies["messages"][1]["blocks"][1]["type"] == "actions"
    assert replies["messages"][1]["edited"]["user"] == "U0AGENT" and "channel" not in replies["messages"][1]
    slack.chat_update(channel=CHANNEL, ts=posted["ts"], text="Done", blocks=[])  # []: they go
    again = slack.conversations_replies(channel=CHANNEL, ts=parent)["messages"][1]
    assert again["blocks"] == [] and again["text"] == "Done"
    assert slack.reactions_get(channel=CHANNEL, timestamp=parent, full=True)["message"]["text"] == "<@U0AGENT> help"
    assert slack.conversations_info(channel=CHANNEL)["channel"]["is_private"] is False
    assert slack.conversations_info(channel=DM)["channel"]["is_im"] is True
    assert slack.users_info(user="U0DANA")["user"]["real_name"] == "Dana"
    assert slack.auth_test()["user_id"] == "U0AGENT"
    slack.chat_delete(channel=CHANNEL, ts=posted["ts"])
    assert [m["ts"] for m in slack.conversations_replies(channel=CHANNEL, ts=parent)["messages"]] == [parent]


def test_a_stream_starts_appends_and_stops_as_slack_documents(served: LocalServer, slack: WebClient) -> None:
    parent = person_says(served, "<@U0AGENT> stream")
    card = {"type": "task_update", "id": "t1", "title": "file_read", "status": "in_progress"}
    started = slack.chat_startStream(
        channel=CHANNEL, thread_ts=parent, chunks=[{"type": "markdown_text", "text": "Hel"}, card]
    )
    slack.chat_appendStream(channel=CHANNEL, ts=started["ts"], chunks=[{"type": "markdown_text", "text": "lo."}])
    stopped = slack.chat_stopStream(channel=CHANNEL, ts=started["ts"], blocks=feedback_blocks("", "r|t")[-1:])
    assert stopped["message"]["text"] == "Hello." and stopped["message"]["blocks"][0]["type"] == "context_actions"
    assert served.playground is not None
    kept = served.playground.workspace.message(CHANNEL, started["ts"])
    assert kept is not None and kept["_stream"]["state"] == "stopped"
    assert [Chunk.parse(c).to_dict() for c in kept["_stream"]["chunks"]] == kept["_stream"]["chunks"]
    error = refused(
        slack.chat_appendStream, channel=CHANNEL, ts=started["ts"], chunks=[{"type": "markdown_text", "text": "x"}]
    )
    assert error == "message_not_in_streaming_state"
    assert refused(slack.chat_startStream, channel=CHANNEL, thread_ts="", markdown_text="x") == "invalid_arguments"


@QUICK
@given(length=st.integers(0, 45_000))
def test_a_messages_text_is_kept_to_slacks_40000_characters(served: LocalServer, slack: WebClient, length: int) -> None:
    text = ("abcdefghij" * 4_501)[:length] or None
    if text is None:
        with pytest.warns(UserWarning, match="text"):  # slack_sdk's own warning, then Slack's refusal
            assert refused(slack.chat_postMessage, channel=CHANNEL, text="") == "no_text"
        return
    posted = slack.chat_postMessage(channel=CHANNEL, text=text)
    assert posted["message"]["text"] == text[:40_000]


@QUICK
@given(count=st.integers(1, 60), size=st.integers(1, 3_100))
def test_blocks_are_refused_past_50_or_a_section_past_3000_characters(
    served: LocalServer, slack: WebClient, count: int, size: int
) -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "x" * size}}] * count
    if count <= 50 and size <= 3_000:
        assert len(slack.chat_postMessage(channel=CHANNEL, text="t", blocks=blocks)["message"]["blocks"]) == count
    else:
        assert refused(slack.chat_postMessage, channel=CHANNEL, text="t", blocks=blocks) == "invalid_blocks"


@QUICK
@given(size=st.integers(1, 13_000))
def test_a_stream_chunk_is_refused_past_12000_characters(served: LocalServer, slack: WebClient, size: int) -> None:
    parent = person_says(served, "chunk")
    chunk = [{"type": "markdown_text", "text": "y" * size}]
    if size <= 12_000:
        assert slack.chat_startStream(channel=CHANNEL, thread_ts=parent, chunks=chunk)["ok"]
    else:
        assert refused(slack.chat_startStream, channel=CHANNEL, thread_ts=parent, chunks=chunk) == "msg_too_long"


@QUICK
@given(count=st.integers(0, 7))
def test_suggested_prompts_are_refused_past_4(served: LocalServer, slack: WebClient, count: int) -> None:
    prompts = [{"title": f"t{n}", "message": f"m{n}"} for n in range(count)]
    if count <= 4:
        assert slack.assistant_threads_setSuggestedPrompts(channel_id=DM, prompts=prompts)["ok"]
    else:
        assert (
            refused(slack.assistant_threads_setSuggestedPrompts, channel_id=DM, prompts=prompts) == "invalid_arguments"
        )


def test_what_slack_refuses_is_refused_by_its_name(served: LocalServer, slack: WebClient) -> None:
    assert served.playground is not None
    theirs = person_says(served, "mine")
    assert (
        refused(WebClient(base_url=served.playground.slack.base).chat_postMessage, channel=CHANNEL, text="x")
        == "not_authed"
    )
    assert refused(WebClient(token="xoxb-other", base_url=served.playground.slack.base).auth_test) == "invalid_auth"
    assert refused(slack.chat_postMessage, channel="C0NOWHERE", text="x") == "channel_not_found"
    assert refused(slack.chat_update, channel=CHANNEL, ts="1.000001", text="x") == "message_not_found"
    assert refused(slack.chat_update, channel=CHANNEL, ts=theirs, text="x") == "cant_update_message"
    assert refused(slack.chat_delete, channel=CHANNEL, ts=theirs) == "cant_delete_message"
    odd = [{"type": "section", "text": {"type": "mrkdwn", "text": "x"}, "colour": "red"}]
    assert refused(slack.chat_postMessage, channel=CHANNEL, text="x", blocks=odd) == "invalid_blocks"
    assert refused(slack.chat_postMessage, channel=CHANNEL, text="x", blocks=[{"type": "nonsense"}]) == "invalid_blocks"
    assert refused(slack.conversations_replies, channel=CHANNEL, ts="2.000002") == "thread_not_found"
    assert refused(slack.conversations_replies, channel=CHANNEL, ts=theirs, cursor="%%%") == "invalid_cursor"
    assert refused(slack.reactions_add, channel=CHANNEL, timestamp=theirs, name="") == "invalid_name"
    request = urllib.request.Request(served.playground.slack.base + "chat.nothing", data=b"", method="POST")
    with pytest.raises(urllib.error.HTTPError) as unknown:
        urllib.request.urlopen(request, timeout=10)
    assert unknown.value.code == 404 and json.loads(unknown.value.read())["error"] == "unknown_method"


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(replies=st.integers(0, 30), limit=st.integers(1, 12))
def test_a_threads_pages_give_every_message_once_in_order(served: LocalServer, replies: int, limit: int) -> None:
    """The runtime's own reader (the slack_thread tool, a mention's earlier messages) pages a thread by Slack's
    cursor until it has all of it."""
    assert served.playground is not None
    parent = person_says(served, "paged")
    written = [parent, *(person_says(served, f"reply {n}", parent) for n in range(replies))]
    replier = SlackReplier(served.playground.slack.token, base_url=served.playground.slack.base)
    seen, cursor = [], None
    while True:
        page, cursor = replier.thread(CHANNEL, parent, cursor=cursor, limit=limit)
        assert len(page) <= limit
        seen += [m["ts"] for m in page]
        if cursor is None:
            break
    assert seen == written


def test_files_go_up_as_slack_sdk_uploads_them_and_down_with_the_bot_token(
    served: LocalServer, slack: WebClient
) -> None:
    assert served.playground is not None
    parent = person_says(served, "files")
    replier = SlackReplier(served.playground.slack.token, base_url=served.playground.slack.base)
    replier.upload(CHANNEL, parent, [("report.csv", b"a,b\n1,2\n")])  # files_upload_v2: URL, POST, complete
    shared = slack.conversations_replies(channel=CHANNEL, ts=parent)["messages"][-1]
    [described] = shared["files"]
    assert (described["name"], described["size"], described["mimetype"]) == ("report.csv", 8, "text/csv")
    assert replier.download(described["url_private"], 1 << 20) == b"a,b\n1,2\n"
    with urllib.request.urlopen(described["url_private"], timeout=10) as response:  # no token: Slack's login page
        assert response.headers["Content-Type"].startswith("text/html")


def test_the_jira_api_answers_the_runtimes_calls(served: LocalServer) -> None:
    from agent_runtime.playground.jira_api import new_issue

    assert served.playground is not None
    jira_api = served.playground.jira
    issue = new_issue(
        served.playground.workspace, "PROJ", "Story", "Retry webhooks", "Design attached", ["x"], "pg-dana"
    )
    env = served.playground.triggers
    assert env.jira_base_url and env.jira_email
    jira = JiraReplier(env.jira_base_url, env.jira_email, str(env.secret("jira_api_token")))
    assert jira.comment_doc(issue["key"], to_adf("Looks *good*.")).isdigit()
    jira.attach(issue["key"], [("notes.md", b"# notes")])
    read = jira.get(f"/rest/api/3/issue/{issue['key']}", {"fields": "summary,comment,attachment"})
    assert read["fields"]["comment"]["total"] == 1 and read["fields"]["attachment"][0]["filename"] == "notes.md"
    assert jira.download(read["fields"]["attachment"][0]["content"], 1 << 20) == b"# notes"
    found = jira.get("/rest/api/3/search/jql", {"jql": 'project = PROJ AND text ~ "retry"', "maxResults": "5"})
    assert [i["key"] for i in found["issues"]] == [issue["key"]]
    assert jira.get("/rest/api/3/search/jql", {"jql": "project = OTHER"})["issues"] == []
    with pytest.raises(ReplyError, match="HTTP 400"):
        jira.comment(issue["key"], "x" * 32_768)
    with pytest.raises(ReplyError, match="HTTP 401"):
        JiraReplier(jira_api.base, "agent@playground.invalid", "wrong").comment(issue["key"], "hi")
    with pytest.raises(ReplyError, match="HTTP 404"):
        jira.comment("NOPE-1", "hi")


def test_the_user_groups_the_rules_name_have_the_first_person_only(served: LocalServer, slack: WebClient) -> None:
    """Access rules read a group's members from Slack: the playground answers for the groups its workflows name,
    Dana in each, Sam in none (one person let in, one refused), and refuses a group it does not know as Slack does."""
    assert served.playground is not None
    replier = SlackReplier(served.playground.slack.token, base_url=served.playground.slack.base)
    assert replier.usergroup_members("S0SRE") == {"U0DANA"}
    assert refused(slack.api_call, api_method="usergroups.users.list", params={"usergroup": "S0NONE"}) == (
        "no_such_subteam"
    )


def test_every_web_api_method_the_runtime_calls_is_served() -> None:
    """The methods the chat client calls (the same scan as the Slack manifest's test), each answered here; slack_sdk's
    ``files_upload_v2`` is the two methods it calls."""
    import re

    from agent_runtime.playground.slack_api import METHODS

    chat = REPO / "layers" / "runtime" / "agent_runtime" / "chat"
    client = "".join((chat / name).read_text() for name in ("replies.py", "stream.py"))
    called = {n.replace(".", "_") for n in re.findall(r'self\._api\(\s*"([\w.]+)"', client)}
    called |= {n for n in re.findall(r"self\.client\.(\w+)\(", client) if n != "files_upload_v2"}
    called |= {"files_getUploadURLExternal", "files_completeUploadExternal"}
    served = {name.replace(".", "_") for name in METHODS}
    assert len(called) >= 14 and called <= served, sorted(called - served)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(project=st.one_of(st.from_regex(r"[A-Z][A-Z0-9_]{1,9}", fullmatch=True), st.text(max_size=30)))
def test_an_issue_is_created_only_in_a_project_key_jira_would_take(served: LocalServer, project: str) -> None:
    """A tool that fills the project with a sentence ("dana reacted jira checkout") gets JIRA's 400, not an
    issue keyed by it."""
    import base64
    import re

    assert served.playground is not None
    env = served.playground.triggers
    auth = base64.b64encode(f"{env.jira_email}:{env.secret('jira_api_token')}".encode()).decode()
    fields = {"project": {"key": project}, "summary": "Checkout fails", "issuetype": {"name": "Task"}}
    request = urllib.request.Request(
        f"{env.jira_base_url}/rest/api/3/issue",
        data=json.dumps({"fields": fields}).encode(),
        headers={"Authorization": f"Basic {auth}", "Content-Type": "application/json"},
        method="POST",
    )
    takes = re.fullmatch(r"[A-Z][A-Z0-9_]{1,9}", project) is not None
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            made = json.loads(response.read())
        assert takes and made["key"].startswith(f"{project}-")
    except urllib.error.HTTPError as error:
        assert not takes and error.code == 400
        assert json.loads(error.read())["errors"] == {"project": "valid project is required"}
