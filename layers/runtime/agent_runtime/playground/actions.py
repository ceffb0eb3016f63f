"""The page's actions, each what a person does in Slack or JIRA: the workspace keeps what Slack would show (the
message, the reaction, the issue), then the request Slack or JIRA would send goes to ``serve``'s webhook
(``deliver``), and the page is told the webhook's answer. A click is sent only for a button the message carries,
with what Slack sends for it (its block, action id and value)."""

from __future__ import annotations

import base64
import binascii
import json
import re
import time
from typing import TYPE_CHECKING, Any

from . import limits
from .deliver import (
    Sent,
    block_actions,
    envelope,
    form,
    hook_signed,
    jira_signed,
    message_event,
    pane_opened,
    reaction_event,
    slack_signed,
)
from .jira_api import add_comment, attach, new_issue
from .layout import BOT_USER, DM, jira_account
from .slack_files import attach as attach_file
from .slack_reads import add_reaction
from .workspace import ISSUE

if TYPE_CHECKING:
    from .app import Playground

Body = dict[str, Any]
MAX_TEXT = 40_000
_MENTION = re.compile(r"(?<![\w<])@(agent|" + BOT_USER + r")\b", re.IGNORECASE)
_EMOJI = re.compile(r"[a-z0-9_+-]{1,100}")
_EVENT = re.compile(r"[A-Za-z0-9_.]{1,64}")
_PROJECT = re.compile(r"[A-Z][A-Z0-9_]{0,9}")


class BadAction(Exception):
    """A page request that makes no sense (a person, channel or message that is not there): a 400, said."""


class Gone(Exception):
    """What the page showed changed before the click reached serve (a button answered, a message deleted): said to
    the page, as Slack says it, not a fault of the request."""


def person(play: Playground, body: Body) -> str:
    user = str(body.get("user") or "")
    if user not in play.layout.people:
        raise BadAction(f"no such person: {user[:20]!r}")
    return user


def say(play: Playground, body: Body) -> Body:
    """A message (in a channel, a thread or the app's direct message), its files, and its event when Slack would
    send one: a mention of ``@agent`` in a channel, anything in the direct message."""
    user, channel, api = person(play, body), str(body.get("channel") or ""), play.slack
    if channel != DM and play.layout.room(channel) is None:
        raise BadAction(f"no such channel: {channel[:20]!r}")
    text = str(body.get("text") or "")[:MAX_TEXT]
    mentioned = bool(_MENTION.search(text))
    message: Body = {"type": "message", "channel": channel, "user": user, "text": _MENTION.sub(f"<@{BOT_USER}>", text)}
    if body.get("thread_ts"):
        message["thread_ts"] = str(body["thread_ts"])
    files = [attach_file(api, name, data, user) for name, data in _files(body)]
    if files:
        message["files"] = files
    if not text and not files:
        raise BadAction("an empty message")
    try:
        message = api.post(message)
    except Exception as error:  # the thread is not there (Refused): said to the page
        raise BadAction(f"not posted: {error}") from None
    event = message_event(message, mentioned=mentioned)
    sent = _slack(play, envelope(event)) if event else None
    return {"ts": message["ts"], "sent": _said(sent, "a channel message without a mention: Slack sends no event")}


def react(play: Playground, body: Body) -> Body:
    user, name = person(play, body), str(body.get("name") or "").strip(":")
    if not _EMOJI.fullmatch(name):
        raise BadAction("an emoji's name: letters, digits, _ + -")
    with play.workspace.lock:
        message = _message(play, body)
        added = add_reaction(message, name, user)
        play.workspace.save(message)
    sent = _slack(play, envelope(reaction_event(user, name, message))) if added else None
    return {"sent": _said(sent, "already there: Slack sends nothing")}


def click(play: Playground, body: Body) -> Body:
    """A button of the message's blocks, found by its block and action id; a feedback button by its verdict."""
    user, message = person(play, body), _message(play, body)
    action = _action(message, str(body.get("block_id") or ""), str(body.get("action_id") or ""), body.get("verdict"))
    room = play.layout.room(message["channel"])
    payload = block_actions(user, play.layout.people[user], message, action, room.name if room else "directmessage")
    data = form(payload)
    headers = slack_signed(data, play.secret("slack_signing_secret"))
    sent = play.send("/slack/interactivity", data, headers, "block_actions", "application/x-www-form-urlencoded")
    return {"sent": _said(sent, "")}


def _labels(given: Any) -> list[str]:
    """An issue's labels: a list of strings or one comma-separated string (at most ten). Anything else is refused,
    naming ``labels``: was, ``str()`` of a list made the one label ``"['design-review']"``, routed nowhere it
    should be, silently. JIRA's labels hold no spaces: a space separates them in the string, and is refused in an
    item of the list."""
    if given is None or isinstance(given, str):
        return [label for label in re.split(r"[\s,]+", given or "") if label][:10]
    if not isinstance(given, list) or not all(isinstance(label, str) for label in given):
        raise BadAction(f"labels: a list of strings or a comma-separated string, not {_json_kind(given)}")
    labels = [label.strip() for label in given if label.strip()]
    if any(re.search(r"[\s,]", label) for label in labels):
        raise BadAction("labels: a label holds no space or comma (JIRA's labels are single words)")
    return labels[:10]


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list holding " + ", ".join(sorted({_json_kind(item) for item in value if not isinstance(item, str)}))
    return {bool: "true/false", int: "a number", float: "a number", dict: "an object"}.get(type(value), "null")


def open_pane(play: Playground, body: Body) -> Body:
    return {"sent": _said(_slack(play, envelope(pane_opened(person(play, body)))), "")}


def new_ticket(play: Playground, body: Body) -> Body:
    """An issue made on the page, and JIRA's ``jira:issue_created`` webhook for it."""
    user, project = person(play, body), str(body.get("project") or "").upper()
    if not _PROJECT.fullmatch(project) or not str(body.get("summary") or "").strip():
        raise BadAction("a project key (PROJ) and a summary")
    labels = _labels(body.get("labels"))
    kind = str(body.get("issue_type") or "Task")[:40]
    summary, description, files = str(body["summary"])[:255], str(body.get("description") or ""), _files(body)
    name = play.layout.people[user]
    issue = new_issue(play.workspace, project, kind, summary, description, labels, jira_account(name))
    for filename, data in files:
        attach(play.workspace, issue, filename, data, play.jira.base)
    play.workspace.put(ISSUE, issue["key"], issue)
    who = {"accountId": jira_account(name), "displayName": name}
    payload = {"webhookEvent": "jira:issue_created", "issue_event_type_name": "issue_created", "user": who}
    return {"key": issue["key"], "sent": _said(_jira(play, {**payload, "issue": issue}), "")}


def comment(play: Playground, body: Body) -> Body:
    from ..adf import to_adf

    user, key, text = person(play, body), str(body.get("key") or ""), str(body.get("text") or "").strip()
    issue = play.workspace.get(ISSUE, key)
    if issue is None or not text:
        raise BadAction("an issue that is there, and a comment")
    name = play.layout.people[user]
    made = add_comment(play.workspace, issue, to_adf(text), {"accountId": jira_account(name), "displayName": name})
    payload = {"webhookEvent": "comment_created", "comment": made, "issue": issue}
    return {"sent": _said(_jira(play, payload), "")}


def hook(play: Playground, body: Body) -> Body:
    """A delivery to ``/hooks/<workflow>``, signed as the workflow's ``triggers.webhook`` says."""
    name = str(body.get("workflow") or "")
    rule = next((h for h in play.layout.hooks if h["workflow"] == name), None)
    if rule is None:
        raise BadAction(f"no workflow takes webhooks by that name: {name[:40]!r}")
    try:
        payload = json.loads(str(body.get("body") or "{}"))
    except ValueError as error:
        raise BadAction(f"the body is not JSON: {error}") from None
    data = json.dumps(payload).encode()
    event = str(body.get("event") or (rule["events"] or ["push"])[0])
    if not _EVENT.fullmatch(event):
        raise BadAction("an event's name: letters, digits, _ and .")
    headers = hook_signed(rule["signature"], event, data, play.secret(rule["secret"]))
    return {"sent": _said(play.send(f"/hooks/{name}", data, headers, f"webhook {event}"), "")}


def fire(play: Playground, body: Body) -> Body:
    """A workflow's schedule now: its tick, into the queue as the schedules' clock puts it (EventBridge
    Scheduler's message on AWS)."""
    name, schedule = str(body.get("workflow") or ""), str(body.get("schedule") or "")
    if not any(s["workflow"] == name and s["schedule"] == schedule for s in play.layout.schedules):
        raise BadAction("no such schedule")
    said = play.fire(name, schedule)
    play.log("queue", 200, said, f"schedule {schedule} of {name}")
    return {"sent": {"route": "queue", "status": 200, "answer": said}}


def _slack(play: Playground, payload: Body) -> Sent:
    data = json.dumps(payload).encode()
    headers = slack_signed(data, play.secret("slack_signing_secret"))
    return play.send("/slack/events", data, headers, str(payload["event"]["type"]))


def _jira(play: Playground, payload: Body) -> Sent:
    data = json.dumps({"timestamp": int(time.time() * 1000), **payload}).encode()
    headers = jira_signed(data, play.secret("jira_webhook_secret"))
    return play.send("/jira/webhook", data, headers, str(payload["webhookEvent"]))


def _message(play: Playground, body: Body) -> Body:
    message = play.workspace.message(str(body.get("channel") or ""), str(body.get("ts") or ""))
    if message is None:
        raise BadAction("no such message")
    if message.get("_deleted"):
        raise Gone("the message was deleted")
    return message


def _action(message: Body, block_id: str, action_id: str, verdict: Any) -> Body:
    """The button as the page showed it: by its action id (its block's id changes with each update of the message,
    as Slack makes a new one for a block that has none); the block the page named first."""
    blocks = sorted(message.get("blocks") or [], key=lambda block: block.get("block_id") != block_id)
    for block in blocks:
        for element in block.get("elements") or []:
            if element.get("action_id") == action_id:
                return _clicked(element, block_id or str(block.get("block_id")), verdict)
    raise Gone("the message has no such button any more (it was answered or updated)")


def _clicked(element: Body, block_id: str, verdict: Any) -> Body:
    """The action Slack sends for a click on ``element``: a button's text and value; a feedback button's, the
    one of its two that was clicked."""
    action = {"type": element.get("type"), "action_id": element.get("action_id"), "block_id": block_id}
    if element.get("type") != "feedback_buttons":
        styled = {"style": element["style"]} if element.get("style") else {}
        return action | {"text": element.get("text"), "value": element.get("value")} | styled
    if verdict not in ("good", "bad"):
        raise BadAction("a feedback button: good or bad")
    button = element.get("positive_button" if verdict == "good" else "negative_button") or {}
    return action | {"text": {**button.get("text", {}), "emoji": True}, "value": button.get("value")}


def _files(body: Body) -> list[tuple[str, bytes]]:
    """The files the page attached: each a name and its bytes in base64; refused, each named, over the limit."""
    given = body.get("files") or []
    if not isinstance(given, list) or not all(isinstance(f, dict) for f in given):
        raise BadAction("files: a list of {name, data (base64)}")
    try:
        found = [
            (str(f.get("name") or "file"), base64.b64decode(str(f.get("data") or ""), validate=True)) for f in given
        ]
    except (binascii.Error, ValueError):
        raise BadAction("a file's data: base64") from None
    if refused := limits.files(found):
        raise BadAction(refused)
    return found


def _said(sent: Sent | None, nothing: str) -> Body:
    if sent is None:
        return {"route": None, "status": None, "answer": nothing}
    return {"route": sent.route, "status": sent.status, "answer": sent.answer}
