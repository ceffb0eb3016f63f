"""Slack as the tests speak it: payloads they send (pane, reactions, ratings), readings of what the fake API got."""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

from tests.triggers_support import FakeApis, slack_request


def chunks(s: Any, method: str) -> list[dict[str, Any]]:
    found = []
    for body in s.apis.named(method):
        raw = body.get("chunks")
        found += json.loads(raw) if isinstance(raw, str) else raw or []
    return found


def streamed_text(s: Any) -> str:
    return "".join(c["text"] for m in ("chat.startStream", "chat.appendStream", "chat.stopStream")
                   for c in chunks(s, m) if c["type"] == "markdown_text")  # fmt: skip


def thread(apis: FakeApis) -> dict[str, str]:
    """The messages Slack shows in the end, by ts, in the order they were posted: a stream's text put together
    from its chunks, an update replacing a text, a deletion removing a message. The fake numbers the messages it
    posts or starts (none is refused here), so the ts of each is known from the order of the calls."""
    shown: dict[str, str] = {}
    posted = 0
    for name, body in apis.calls:
        if name in ("chat.postMessage", "chat.startStream"):
            posted += 1
            ts = f"1763800100.{posted:06d}"
            shown[ts] = str(body.get("text") or "") if name == "chat.postMessage" else ""
        else:
            ts = str(body.get("ts") or "")
        if name in ("chat.startStream", "chat.appendStream", "chat.stopStream") and ts in shown:
            shown[ts] += markdown(body)
        elif name == "chat.update" and ts in shown:
            shown[ts] = str(body.get("text") or "")
        elif name == "chat.delete":
            shown.pop(ts, None)
    return shown


def markdown(body: dict[str, Any]) -> str:
    raw = body.get("chunks")
    parsed = json.loads(raw) if isinstance(raw, str) else raw or []
    return "".join(c["text"] for c in parsed if c["type"] == "markdown_text")


def stop_value(s: Any) -> str:
    """The Stop button's value on the working message."""
    for message in s.apis.named("chat.postMessage"):
        blocks = message.get("blocks") or []
        blocks = json.loads(blocks) if isinstance(blocks, str) else blocks
        for block in blocks:
            for element in block.get("elements", []) if block.get("type") == "actions" else []:
                if element.get("action_id") == "run_stop":
                    return str(element["value"])
    raise AssertionError("no Stop button was posted")


def feedback_buttons(s: Any) -> dict[str, str]:
    """The feedback buttons of the answer (its chat.update), by verdict: their values."""
    [answer] = [u for u in s.apis.named("chat.update") if "context_actions" in json.dumps(u.get("blocks") or [])]
    blocks = answer["blocks"] if isinstance(answer["blocks"], list) else json.loads(answer["blocks"])
    [actions] = [b for b in blocks if b["type"] == "context_actions"]
    [element] = actions["elements"]
    assert element["type"] == "feedback_buttons"
    return {"good": element["positive_button"]["value"], "bad": element["negative_button"]["value"]}


def rate(s: Any, value: str, user: str, **sign: Any) -> dict[str, Any]:
    """A click on a feedback button, as Slack sends it: a block_actions payload in the shape of Bolt for Python's
    own fixtures (tests/scenario_tests/test_events_agent.py), the action's type feedback_buttons."""
    action = {"type": "feedback_buttons", "action_id": "answer_feedback", "block_id": "fb", "value": value,
              "action_ts": str(time.time())}  # fmt: skip
    payload = {
        "type": "block_actions",
        "user": {"id": user, "username": "dana", "name": "dana", "team_id": "T0TEAM"},
        "api_app_id": "A0APP",
        "token": "verification_token",
        "container": {"type": "message", "message_ts": "1763800100.000001", "channel_id": "C0OPS",
                      "is_ephemeral": False},
        "channel": {"id": "C0OPS", "name": "ops"},
        "team": {"id": "T0TEAM", "domain": "acme"},
        "enterprise": None,
        "trigger_id": f"{time.time_ns()}.111.xxx",
        "actions": [action],
    }  # fmt: skip
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    signed_body, headers = slack_request(body, **sign)
    return s.post("/slack/interactivity", signed_body, headers | {"Content-Type": "application/x-www-form-urlencoded"})


DESK = """\
name: assistant-desk
description: Answers in the app's pane.
prompt: You help people in Slack.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack:
    direct_messages: true
    suggested_prompts:
      - Summarise the open incidents
      - {title: Review a design, message: Review the design I attach next}
"""
THREAD = "1726133698.626339"  # the assistant thread Slack opened (its root is the app's "New chat" message)


def envelope(event: dict[str, Any], event_id: str) -> dict[str, Any]:
    return {
        "token": "verification_token",
        "team_id": "T0TEAM",
        "enterprise_id": "E111",
        "api_app_id": "A0APP",
        "event": event,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1599616881,
        "authorizations": [{"enterprise_id": "E111", "team_id": "T0TEAM", "user_id": "U0BOT", "is_bot": True,
                            "is_enterprise_install": False}],
    }  # fmt: skip


def thread_event(kind: str, event_id: str, viewing: str) -> dict[str, Any]:
    """assistant_thread_started / assistant_thread_context_changed."""
    thread = {"user_id": "U0DANA", "context": {"channel_id": viewing, "team_id": "T0TEAM", "enterprise_id": "E111"},
              "channel_id": "D0APP", "thread_ts": THREAD}  # fmt: skip
    return envelope({"type": kind, "assistant_thread": thread, "event_ts": "1726133698.665188"}, event_id)


def pane_message(event_id: str, text: str, ts: str, *, token: bool = False, thread: str = THREAD) -> dict[str, Any]:
    """A person's message in the pane (message.im): with the assistant_thread field, or without (both are sent)."""
    event = {"user": "U0DANA", "type": "message", "ts": ts, "text": text, "team": "T0TEAM", "user_team": "T0TEAM",
             "source_team": "T0TEAM", "user_profile": {}, "thread_ts": thread, "parent_user_id": "U0DANA",
             "channel": "D0APP", "event_ts": ts, "channel_type": "im"}  # fmt: skip
    if token:
        event["assistant_thread"] = {"action_token": "10116779555154.10138525474272.9b39d433f13510945bee770e07841d02"}
    return envelope(event, event_id)


def messages_tab(event_id: str, tab: str = "messages") -> dict[str, Any]:
    """app_home_opened: the agent view's entry (a person opened the app's Messages tab)."""
    event = {"type": "app_home_opened", "user": "U0DANA", "channel": "D0APP", "tab": tab, "event_ts": "1606810927.5"}
    return envelope(event, event_id)


PARENT, REPLY = "1763800000.000100", "1763800040.000200"
FLOW = """\
name: jira-draft
description: Drafts a JIRA ticket from a Slack message marked with :jira:.
prompt: You draft tickets.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack: {channels: [C0OPS], reactions: [jira]}
"""


def reaction(event_id: str, emoji: str = "jira", *, user: str = "U0DANA", channel: str = "C0OPS") -> dict[str, Any]:
    event = {"type": "reaction_added", "user": user, "reaction": emoji, "item_user": "U0ERIN",
             "item": {"type": "message", "channel": channel, "ts": REPLY}, "event_ts": "1763800050.000300"}  # fmt: skip
    return {"token": "unused", "team_id": "T0TEAM", "api_app_id": "A0APP", "event": event,
            "type": "event_callback", "event_id": event_id, "event_time": 1763800050}  # fmt: skip
