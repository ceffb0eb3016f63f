"""Slack's own payloads (issue 40, must show): the events and actions Bolt's test suite records as Slack sends them
(``../shared/slackreal-fixtures``, read in place, never copied here: ``provenance.json`` says where each comes
from) go through the same parsers the webhook uses, and our own test payloads carry every key of theirs that the
code reads. Skipped where that folder is not beside the checkout."""

from __future__ import annotations

import json
import urllib.parse
from typing import Any

import pytest
from agent_runtime.actions import FEEDBACK
from agent_runtime.inbound import PaneEvent, TriggerEvent
from agent_runtime.triggers.slack import Challenge, Ignored, parse, parse_action

from tests.conftest import REPO
from tests.triggers_support import slack_mention

FIXTURES = REPO.parent / "shared" / "slackreal-fixtures"
pytestmark = pytest.mark.skipif(not FIXTURES.is_dir(), reason=f"Slack's payloads are not at {FIXTURES}")
BOT = "W111"  # the bot user of Bolt's payloads


def real(name: str) -> Any:
    return json.loads((FIXTURES / f"{name}.json").read_text())


def parsed(name: str) -> object:
    return parse(json.dumps(real(name)).encode(), bot_user_id=BOT)


def test_every_recorded_payload_has_its_provenance() -> None:
    provenance = real("provenance")
    names = {p.stem for p in FIXTURES.glob("*.json")} - {"provenance", "manifest.schema.1.0.0"}
    assert names <= set(provenance)


def test_a_mention_and_a_direct_message_start_runs() -> None:
    mention = parsed("app_mention")
    assert isinstance(mention, TriggerEvent) and mention.kind == "app_mention"
    assert mention.text == "Hi there!" and mention.user == "W222" and mention.reply_to["channel"] == "C111"
    assert mention.thread_id == "slack-T111-C111-1595926230.009600"
    for name in ("message_im_assistant_thread", "message_im_assistant_thread_action_token", "message_im_file_share"):
        direct = parsed(name)
        assert isinstance(direct, TriggerEvent) and direct.kind == "message", name
        assert direct.attributes["direct_message"] is True and direct.reply_to["channel"] == "D111"


def test_what_starts_nothing_is_ignored() -> None:
    for name in ("message_im_from_a_bot", "message_changed_assistant_app_thread", "app_home_opened_home",
                 "app_context_changed"):  # fmt: skip
        assert isinstance(parsed(name), Ignored), name
    assert isinstance(parsed("url_verification"), Challenge)


def test_the_pane_events_are_read_as_slack_sends_them() -> None:
    started = parsed("assistant_thread_started")
    assert isinstance(started, PaneEvent) and started.kind == "opened"
    assert (started.channel, started.user, started.viewing) == ("D111", "W222", "C222")
    assert started.thread_ts == "1726133698.626339"
    changed = parsed("assistant_thread_context_changed")
    assert isinstance(changed, PaneEvent) and changed.kind == "context" and changed.viewing
    home = parsed("app_home_opened_messages")
    assert isinstance(home, PaneEvent) and home.channel == "D111" and home.thread_ts is None


def test_a_feedback_click_in_slacks_envelope_is_a_rating() -> None:
    envelope, button = real("block_actions_envelope"), real("feedback_action")
    click = {**button, "action_id": FEEDBACK, "value": "run-1|slack-T111-C111-1.0|good"}
    body = urllib.parse.urlencode({"payload": json.dumps({**envelope, "actions": [click]})}).encode()
    action = parse_action(body)
    assert not isinstance(action, Ignored)
    message = action.message
    assert message["verdict"] == "good" and message["user"] == "W111" and message["run_id"] == "run-1"
    assert message["name"] == "primary-owner"  # the clicker's name, kept with the rating for the run's page


def test_our_test_mention_carries_every_key_of_slacks_that_the_code_reads() -> None:
    theirs, ours = real("app_mention"), slack_mention()
    read = {"type", "user", "text", "ts", "channel", "event_ts"}  # what parse() and the worker use
    assert read <= set(theirs["event"]) and read <= set(ours["event"])
    envelope = {"team_id", "api_app_id", "event", "type", "event_id", "event_time"}
    assert envelope <= set(theirs) and envelope <= set(ours)
