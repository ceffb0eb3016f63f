"""Reactions (``triggers.slack.reactions``): an emoji added to a message in a listed channel starts the workflow
with that message (and its thread before it, quoted) as input, through the webhook, SQS (moto) and the worker
against the fake Slack API; the answer goes in the message's thread; one run per message and emoji, whoever adds
it again; other emoji and other channels start nothing."""

from __future__ import annotations

import json
from pathlib import Path

from agent_runtime.testing import reply

from tests.slack_support import FLOW, PARENT, REPLY, reaction
from tests.triggers_support import slack_request


def test_a_reaction_runs_once_per_message_and_emoji_with_its_thread(system, scripted, tmp_path: Path) -> None:
    (tmp_path / "jira-draft.yaml").write_text(FLOW)
    server = scripted(reply("Drafted: PROJ-? Queue consumer drops messages on retry."))
    s = system(server)
    s.apis.threads[PARENT] = [
        {"ts": PARENT, "user": "U0ERIN", "text": "Anyone seen the consumer lose messages?"},
        {"ts": REPLY, "thread_ts": PARENT, "user": "U0ERIN", "text": "The queue consumer drops messages on retry."},
    ]
    first = s.post("/slack/events", *slack_request(reaction("Ev40")))
    assert json.loads(first["body"]) == {"status": "queued", "workflow": "jira-draft"}
    again = s.post("/slack/events", *slack_request(reaction("Ev41", user="U0FRANK")))  # someone else adds it too
    assert json.loads(again["body"])["status"] != "queued"
    assert s.deliver() == ["answered"]
    [request] = server.requests
    said = request.last_user_text()
    assert "reacted with :jira:" in said and "The queue consumer drops messages on retry." in said
    assert "Anyone seen the consumer lose messages?" in json.dumps(request.messages)  # the thread, quoted
    [asked] = s.apis.named("reactions.get")
    assert (asked["channel"], asked["timestamp"]) == ("C0OPS", REPLY)
    posted = s.apis.named("chat.postMessage") + s.apis.named("chat.update")
    assert {p.get("thread_ts") for p in s.apis.named("chat.postMessage")} == {PARENT}  # in the message's thread
    assert any("Drafted" in str(p.get("text")) for p in posted)

    for other in (reaction("Ev42", "eyes"), reaction("Ev43", channel="C0ELSE")):
        ignored = json.loads(s.post("/slack/events", *slack_request(other))["body"])
        assert ignored["status"] == "ignored"
    assert s.deliver() == [] and len(server.requests) == 1


def test_the_bots_own_reactions_start_nothing(system, scripted, tmp_path: Path) -> None:
    """As the bot's own messages start nothing, neither do its reactions (a workflow that marks messages, like the
    merged-prs example, must not start one that reads marks): the bot known by SLACK_BOT_USER_ID, or as the app's
    bot user Slack's envelope names (``authorizations``). A person's same reaction still starts the run."""
    from tests.triggers_support import BOT_USER

    (tmp_path / "jira-draft.yaml").write_text(FLOW)
    server = scripted(reply("Drafted."))
    s = system(server)
    s.apis.threads[PARENT] = [  # the message reacted to is there: a reaction to one Slack cannot read fails its run
        {"ts": PARENT, "user": "U0ERIN", "text": "Anyone seen the consumer lose messages?"},
        {"ts": REPLY, "thread_ts": PARENT, "user": "U0ERIN", "text": "The queue consumer drops messages on retry."},
    ]
    by_config = reaction("Ev50", user=BOT_USER)
    by_envelope = {**reaction("Ev51", user="U0APPBOT"), "authorizations": [{"user_id": "U0APPBOT", "is_bot": True}]}
    for own in (by_config, by_envelope):
        answer = json.loads(s.post("/slack/events", *slack_request(own))["body"])
        assert answer == {"status": "ignored", "reason": "the bot's own reaction"}
    assert s.deliver() == [] and not server.requests
    person = {**reaction("Ev52"), "authorizations": [{"user_id": "U0APPBOT", "is_bot": True}]}
    assert json.loads(s.post("/slack/events", *slack_request(person))["body"])["status"] == "queued"
    assert s.deliver() == ["answered"]
