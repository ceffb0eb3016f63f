"""What the page's actions become: the requests Slack, JIRA and a webhook's sender would send, in their own
shapes, signed with the secrets ``serve`` verifies, POSTed over HTTP to ``serve``'s own routes (``/slack/events``,
``/slack/interactivity``, ``/jira/webhook``, ``/hooks/<workflow>``). Nothing in the webhook knows where they came
from: a forged or unsigned one is refused as any other.

Slack's shapes are those of its Events API and interactivity payloads (an ``event_callback`` envelope with its
``authorizations``; ``block_actions`` as a form field ``payload``), JIRA's those of its webhooks.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from dataclasses import dataclass
from typing import Any

from .layout import APP_ID, BOT_USER, DM, TEAM

TIMEOUT = 10.0  # the webhook answers within Slack's 3 s; a slower one is a fault worth seeing


@dataclass(frozen=True, slots=True)
class Sent:
    route: str
    status: int
    answer: Any  # the webhook's JSON answer (or its text)


def envelope(event: dict[str, Any]) -> dict[str, Any]:
    """An Events API delivery: the event in Slack's ``event_callback`` envelope, to this app's bot user."""
    bot = {"enterprise_id": None, "team_id": TEAM, "user_id": BOT_USER, "is_bot": True}
    return {
        "token": "playground",
        "team_id": TEAM,
        "enterprise_id": None,
        "api_app_id": APP_ID,
        "event": event,
        "type": "event_callback",
        "event_id": "Ev" + secrets.token_hex(6).upper(),
        "event_time": int(time.time()),
        "authorizations": [{**bot, "is_enterprise_install": False}],
    }


def message_event(message: dict[str, Any], *, mentioned: bool) -> dict[str, Any] | None:
    """The event a person's message becomes: ``app_mention`` in a channel when it mentions the app, ``message``
    in the app's direct message; nothing for a channel message that does not (the app subscribes to neither)."""
    channel, ts = message["channel"], message["ts"]
    event: dict[str, Any] = {"user": message["user"], "text": message["text"], "ts": ts, "team": TEAM}
    event |= {"channel": channel, "event_ts": ts, "client_msg_id": str(uuid.uuid4())}
    if message.get("thread_ts") and message["thread_ts"] != ts:
        event["thread_ts"] = message["thread_ts"]
        event["parent_user_id"] = message.get("parent_user_id")
    if message.get("files"):
        event["files"] = message["files"]
    if channel == DM:
        return {"type": "message", **event, "channel_type": "im"} | (
            {"subtype": "file_share"} if message.get("files") else {}
        )
    return {"type": "app_mention", **event} if mentioned else None


def reaction_event(user: str, name: str, message: dict[str, Any]) -> dict[str, Any]:
    item = {"type": "message", "channel": message["channel"], "ts": message["ts"]}
    event = {"type": "reaction_added", "user": user, "reaction": name, "item": item}
    return event | {"item_user": message.get("user"), "event_ts": f"{time.time():.6f}"}


def pane_opened(user: str) -> dict[str, Any]:
    """The person opened the app's Messages tab (the agent view): ``app_home_opened``."""
    return {"type": "app_home_opened", "user": user, "channel": DM, "tab": "messages", "event_ts": f"{time.time():.6f}"}


def block_actions(
    user: str, name: str, message: dict[str, Any], action: dict[str, Any], channel_name: str
) -> dict[str, Any]:
    """A click on a message's button, as the interactivity payload Slack POSTs (``type: block_actions``)."""
    container = {"type": "message", "message_ts": message["ts"], "channel_id": message["channel"]}
    container |= {"is_ephemeral": False} | ({"thread_ts": message["thread_ts"]} if message.get("thread_ts") else {})
    person = {"id": user, "username": name.lower(), "name": name.lower(), "team_id": TEAM}
    shown = {k: v for k, v in message.items() if not k.startswith("_") and k != "channel"}
    return {
        "type": "block_actions",
        "user": person,
        "api_app_id": APP_ID,
        "token": "playground",
        "container": container,
        "trigger_id": f"{int(time.time())}.{secrets.randbelow(10**12)}.{secrets.token_hex(16)}",
        "team": {"id": TEAM, "domain": "playground"},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": message["channel"], "name": channel_name},
        "message": shown,
        "state": {"values": {}},
        "response_url": "https://hooks.slack.com/actions/playground/none",
        "actions": [{**action, "action_ts": f"{time.time():.6f}"}],
    }


def slack_signed(body: bytes, secret: str) -> dict[str, str]:
    """Slack's v0 signature (slack_sdk's own signer): what ``/slack/events`` and ``/slack/interactivity`` check."""
    from slack_sdk.signature import SignatureVerifier

    stamp = str(int(time.time()))
    signature = str(SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body))
    return {"X-Slack-Request-Timestamp": stamp, "X-Slack-Signature": signature}


def jira_signed(body: bytes, secret: str) -> dict[str, str]:
    """A JIRA admin webhook's signature: ``X-Hub-Signature: sha256=<hex>`` of the body."""
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature": f"sha256={digest}", "X-Atlassian-Webhook-Identifier": str(uuid.uuid4())}


def hook_signed(signature: str, event: str, body: bytes, secret: str) -> dict[str, str]:
    """A signed webhook as its sender signs it: GitHub's, ``hmac``'s (a timestamp signed with the body), Notion's."""
    if signature == "hmac":
        stamp = str(int(time.time()))
        digest = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
        signed = {"X-Signature-256": f"sha256={digest}", "X-Signature-Timestamp": stamp}
        return signed | {"X-Delivery-Id": str(uuid.uuid4())}
    digest = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    if signature == "notion":
        return {"X-Notion-Signature": digest}
    return {"X-Hub-Signature-256": digest, "X-GitHub-Event": event, "X-GitHub-Delivery": str(uuid.uuid4())}


def post(url: str, route: str, body: bytes, headers: dict[str, str], kind: str = "application/json") -> Sent:
    """The request, over HTTP to ``serve``'s route, and the webhook's answer."""
    request = urllib.request.Request(url + route, data=body, headers={"Content-Type": kind, **headers}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
            status, text = response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read().decode("utf-8", "replace")
    except (urllib.error.URLError, OSError) as error:
        return Sent(route, 0, f"not delivered: {error}")
    try:
        return Sent(route, status, json.loads(text) if text else "")
    except ValueError:
        return Sent(route, status, text)


def form(payload: dict[str, Any]) -> bytes:
    return urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
