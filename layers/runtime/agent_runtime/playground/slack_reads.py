"""The Web API methods that read the workspace (threads, history, a channel, a reacted message, people) or set the
app's pane (status, title, suggested prompts), and the bot's own reactions. Shapes as Slack documents them; a
thread's pages carry an opaque ``next_cursor`` as Slack's do."""

from __future__ import annotations

import base64
from typing import Any

from .layout import BOT_ID, BOT_NAME, BOT_USER, DM, TEAM
from .limits import Refused
from .limits import prompts as valid_prompts
from .slack_api import Args, SlackWebApi, method, shown
from .workspace import PANE

MAX_PAGE = 1_000  # conversations.replies and .history: Slack's largest limit


@method("conversations.replies")
def _replies(api: SlackWebApi, args: Args) -> Args:
    channel, ts = api.channel(args), str(args.get("ts") or "")
    messages = api.workspace.thread(channel, ts)
    if not messages or messages[0]["ts"] != ts:
        raise Refused("thread_not_found")
    return _page(messages, args)


@method("conversations.history")
def _history(api: SlackWebApi, args: Args) -> Args:
    return _page(api.workspace.history(api.channel(args)), args)


def _page(messages: list[Args], args: Args) -> Args:
    start = _cursor(args.get("cursor"))
    try:
        limit = max(1, min(MAX_PAGE, int(args.get("limit") or 100)))
    except (TypeError, ValueError):
        raise Refused("invalid_limit") from None
    page, more = messages[start : start + limit], start + limit < len(messages)
    following = base64.b64encode(f"next_ts:{start + limit}".encode()).decode() if more else ""
    return {"messages": [shown(m) for m in page], "has_more": more, "response_metadata": {"next_cursor": following}}


def _cursor(value: Any) -> int:
    if not value:
        return 0
    try:
        kind, _, at = base64.b64decode(str(value), validate=True).decode().partition(":")
        if kind == "next_ts" and at.isdigit():
            return int(at)
    except ValueError:
        pass
    raise Refused("invalid_cursor")


@method("conversations.info")
def _info(api: SlackWebApi, args: Args) -> Args:
    channel = api.channel(args)
    if channel == DM:
        return {"channel": {"id": DM, "is_im": True, "is_channel": False, "is_private": True, "user": "U0DANA"}}
    room = api.layout.room(channel)
    name = room.name if room else channel.lower()
    found = {"id": channel, "name": name, "is_channel": True, "is_private": False, "is_im": False, "is_mpim": False}
    return {"channel": {**found, "is_member": True, "is_archived": False, "context_team_id": TEAM}}


@method("reactions.get")
def _reactions_get(api: SlackWebApi, args: Args) -> Args:
    channel = api.channel(args)
    message = api.found(channel, args.get("timestamp"))
    return {"type": "message", "channel": channel, "message": shown(message)}


@method("reactions.add")
def _reactions_add(api: SlackWebApi, args: Args) -> Args:
    channel, name = api.channel(args), str(args.get("name") or "").strip(":")
    if not name:
        raise Refused("invalid_name")
    with api.workspace.lock:
        message = api.found(channel, args.get("timestamp"))
        if not add_reaction(message, name, BOT_USER):
            raise Refused("already_reacted")
        api.workspace.save(message)
    return {}


def add_reaction(message: Args, name: str, user: str) -> bool:
    """``user``'s ``name`` on the message, as Slack lists reactions; False when it was there already."""
    reactions = message.setdefault("reactions", [])
    found = next((r for r in reactions if r.get("name") == name), None)
    if found is None:
        reactions.append({"name": name, "users": [user], "count": 1})
        return True
    if user in found["users"]:
        return False
    found["users"].append(user)
    found["count"] = len(found["users"])
    return True


@method("users.info")
def _user(api: SlackWebApi, args: Args) -> Args:
    user = str(args.get("user") or "")
    if user == BOT_USER:
        return {"user": {"id": BOT_USER, "team_id": TEAM, "name": BOT_NAME, "is_bot": True, "profile": {}}}
    if user not in api.layout.people:
        raise Refused("user_not_found")
    name = api.layout.people[user]
    profile = {"real_name": name, "display_name": name}
    person = {"id": user, "team_id": TEAM, "name": name.lower(), "real_name": name, "is_bot": False}
    return {"user": {**person, "profile": profile}}


@method("auth.test")
def _auth_test(api: SlackWebApi, args: Args) -> Args:
    url = "https://playground.slack.invalid/"
    return {"url": url, "team": "playground", "user": BOT_NAME, "team_id": TEAM, "user_id": BOT_USER, "bot_id": BOT_ID}


@method("assistant.threads.setStatus")
def _set_status(api: SlackWebApi, args: Args) -> Args:
    _pane_thread(api, args)
    thread_ts, status = str(args.get("thread_ts") or ""), args.get("status")
    if status is None:
        raise Refused("invalid_arguments", "status is required (empty clears it)")
    _pane_update(api, "status", thread_ts, str(status)[:255] or None)
    return {}


@method("assistant.threads.setTitle")
def _set_title(api: SlackWebApi, args: Args) -> Args:
    _pane_thread(api, args)
    _pane_update(api, "titles", str(args.get("thread_ts") or ""), str(args.get("title") or "") or None)
    return {}


@method("assistant.threads.setSuggestedPrompts")
def _suggest(api: SlackWebApi, args: Args) -> Args:
    if str(args.get("channel_id") or "") != DM:
        raise Refused("channel_not_found" if args.get("channel_id") else "invalid_arguments")
    prompts = valid_prompts(args.get("prompts"))
    _pane_update(api, "prompts", str(args.get("thread_ts") or ""), prompts or None)
    return {}


def _pane_thread(api: SlackWebApi, args: Args) -> str:
    channel = str(args.get("channel_id") or "")
    if channel != DM:
        raise Refused("channel_not_found" if channel else "invalid_arguments")
    if not args.get("thread_ts"):
        raise Refused("invalid_arguments", "thread_ts is required")
    return channel


def _pane_update(api: SlackWebApi, part: str, thread_ts: str, value: Any) -> None:
    """The pane's ``part`` for a thread (the agent view's prompts: the thread ""); None clears it."""
    with api.workspace.lock:
        pane = api.workspace.get(PANE, DM) or {}
        kept = pane.setdefault(part, {})
        if value is None:
            kept.pop(thread_ts, None)
        else:
            kept[thread_ts] = value
        api.workspace.put(PANE, DM, pane)
