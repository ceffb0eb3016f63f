"""Slack's Web API, served by the playground at ``SLACK_API_URL``: the methods the runtime calls, answered with
Slack's documented shapes and errors, on the messages the workspace keeps. The runtime's own client (slack_sdk's
``WebClient``) talks to it as to slack.com: the bot token in ``Authorization``, JSON or form bodies, GET queries.

This module takes a call apart (the token, the arguments), dispatches it, and holds what posts and edits messages
(``chat.*``, the answer streams); reading threads, reactions, the pane and files are ``slack_reads``.
"""

from __future__ import annotations

import json
import secrets
import urllib.parse
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from .layout import APP_ID, BOT_ID, BOT_USER, DM, TEAM, Layout
from .limits import Refused
from .limits import blocks as valid_blocks
from .limits import chunks as valid_chunks
from .limits import text as kept_text
from .workspace import PANE, Workspace

Args = dict[str, Any]
Method = Callable[["SlackWebApi", Args], Args]
METHODS: dict[str, Method] = {}


def method(name: str) -> Callable[[Method], Method]:
    def register(handler: Method) -> Method:
        METHODS[name] = handler
        return handler

    return register


class SlackWebApi:
    """The Web API over the workspace. ``base``: its own URL (files' ``url_private`` start with it, as the
    runtime downloads with the bot token only from there)."""

    def __init__(self, workspace: Workspace, layout: Layout, *, token: str, base: str) -> None:
        self.workspace, self.layout, self.token, self.base = workspace, layout, token, base.rstrip("/") + "/"
        self.calls: deque[tuple[str, str]] = deque(maxlen=1_000)  # (method, error or "ok"): the latest asked

    def serve(self, name: str, headers: Mapping[str, str], query: str, body: bytes) -> tuple[int, bytes]:
        """One HTTP call: Slack answers 200 with ``ok`` false for a refusal, 404 for a method it does not have."""
        if name not in METHODS:
            return 404, _json({"ok": False, "error": "unknown_method", "req_method": name[:100]})
        try:
            args = _arguments(headers, query, body)
            self._authorise(headers, args)
            answer = {"ok": True, **METHODS[name](self, args)}
        except Refused as refused:
            answer = {"ok": False, "error": refused.error}
            if refused.detail:
                answer["response_metadata"] = {"messages": [f"[ERROR] {refused.detail}"]}
        self.calls.append((name, "ok" if answer["ok"] else str(answer["error"])))
        return 200, _json(answer)

    def _authorise(self, headers: Mapping[str, str], args: Args) -> None:
        given = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        token = given.removeprefix("Bearer ").strip() if given.startswith("Bearer ") else str(args.pop("token", ""))
        if not token:
            raise Refused("not_authed")
        if token != self.token:
            raise Refused("invalid_auth")

    def channel(self, args: Args, key: str = "channel") -> str:
        channel = str(args.get(key) or "")
        if not channel:
            raise Refused("channel_not_found" if key in args else "invalid_arguments", f"missing {key}")
        if channel != DM and self.layout.room(channel) is None:
            raise Refused("channel_not_found")
        return channel

    def found(self, channel: str, ts: Any) -> Args:
        message = self.workspace.message(channel, str(ts or ""))
        if message is None or message.get("_deleted"):
            raise Refused("message_not_found")
        return message

    def post(self, message: Args) -> Args:
        """A new message in its channel, a reply counted on its thread's parent (Slack's ``reply_count``)."""
        ws = self.workspace
        with ws.lock:
            message["ts"] = message.get("ts") or ws.next_ts()
            thread_ts = message.get("thread_ts")
            if not thread_ts or thread_ts == message["ts"]:
                return ws.save(message)
            parent = self.found(message["channel"], thread_ts)
            message["parent_user_id"] = parent.get("user")
            ws.save(message)
            self.recount(parent)
            return message

    def recount(self, parent: Args) -> None:
        """The parent's reply fields as Slack keeps them: its replies still there (not itself, nor a deleted one:
        a run's working message, posted and deleted, is no reply), the latest of them, and who wrote them."""
        ws = self.workspace
        with ws.lock:
            parent["thread_ts"] = parent["ts"]
            replies = [m for m in ws.thread(parent["channel"], parent["ts"]) if m["ts"] != parent["ts"]]
            for key in ("reply_count", "latest_reply", "reply_users"):
                parent.pop(key, None)
            if replies:
                users = dict.fromkeys(str(m["user"]) for m in replies if m.get("user"))
                parent.update(reply_count=len(replies), latest_reply=replies[-1]["ts"], reply_users=list(users))
            ws.save(parent)

    def bot_message(self, channel: str, thread_ts: Any, text: str, blocks: list[Args] | None) -> Args:
        message: Args = {"type": "message", "channel": channel, "user": BOT_USER, "bot_id": BOT_ID}
        message.update(app_id=APP_ID, team=TEAM, text=text)
        if blocks is not None:
            message["blocks"] = with_ids(blocks)
        if thread_ts:
            message["thread_ts"] = str(thread_ts)
        return message

    def said_in(self, channel: str, thread_ts: str) -> None:
        """The app wrote in a thread of its pane: Slack clears the thread's status then."""
        if channel != DM:
            return
        with self.workspace.lock:
            pane = self.workspace.get(PANE, DM) or {}
            if (pane.get("status") or {}).get(thread_ts):
                pane["status"].pop(thread_ts)
                self.workspace.put(PANE, DM, pane)


def with_ids(blocks: list[Args]) -> list[Args]:
    """Blocks as Slack keeps them: each with a ``block_id`` (Slack makes one where the app gave none)."""
    return [block if block.get("block_id") else {**block, "block_id": secrets.token_urlsafe(4)} for block in blocks]


def shown(message: Args) -> Args:
    """A message as the Web API shows it: without what only the workspace keeps (its channel, its stream)."""
    return {k: v for k, v in message.items() if not k.startswith("_") and k != "channel"}


def _json(answer: Args) -> bytes:
    return json.dumps(answer).encode()


def _arguments(headers: Mapping[str, str], query: str, body: bytes) -> Args:
    """The query's fields, then the body's: JSON (``chat.postMessage``) or a form (``chat.delete``)."""
    args: Args = dict(urllib.parse.parse_qsl(query, keep_blank_values=True))
    kind = {k.lower(): v for k, v in headers.items()}.get("content-type", "")
    if not body:
        return args
    try:
        if "json" in kind:
            parsed = json.loads(body)
            if not isinstance(parsed, dict):
                raise Refused("invalid_json")
            return {**args, **parsed}
        return {**args, **dict(urllib.parse.parse_qsl(body.decode("utf-8"), keep_blank_values=True))}
    except (ValueError, UnicodeDecodeError):
        raise Refused("invalid_json" if "json" in kind else "invalid_form_data") from None


@method("chat.postMessage")
def _post_message(api: SlackWebApi, args: Args) -> Args:
    person = str(args.get("channel") or "")
    if person not in api.layout.people:
        person = ""
    channel, blocks = DM if person else api.channel(args), valid_blocks(args.get("blocks"))
    if not args.get("text") and not blocks:
        raise Refused("no_text")
    message = api.bot_message(channel, args.get("thread_ts"), kept_text(args.get("text")), blocks)
    if person:  # a user id: Slack posts in the app's direct message with that person (theirs alone to see)
        message["_dm"] = person
    message = api.post(message)
    api.said_in(channel, str(message.get("thread_ts") or ""))
    return {"channel": channel, "ts": message["ts"], "message": shown(message)}


@method("chat.update")
def _update(api: SlackWebApi, args: Args) -> Args:
    channel, blocks = api.channel(args), valid_blocks(args.get("blocks"))
    with api.workspace.lock:
        message = api.found(channel, args.get("ts"))
        if message.get("bot_id") != BOT_ID:
            raise Refused("cant_update_message")
        if "text" in args:
            message["text"] = kept_text(args["text"])
        if blocks is not None:  # [] removes them (the working message's Stop button goes); absent, they stay
            message["blocks"] = with_ids(blocks)
        message["edited"] = {"user": BOT_USER, "ts": api.workspace.next_ts()}
        api.workspace.save(message)
    return {"channel": channel, "ts": message["ts"], "text": message["text"], "message": shown(message)}


@method("chat.delete")
def _delete(api: SlackWebApi, args: Args) -> Args:
    channel = api.channel(args)
    with api.workspace.lock:
        message = api.found(channel, args.get("ts"))
        if message.get("bot_id") != BOT_ID:
            raise Refused("cant_delete_message")
        message["_deleted"] = True
        api.workspace.save(message)
        parent = str(message.get("thread_ts") or message["ts"])
        if parent != message["ts"] and (found := api.workspace.message(channel, parent)) is not None:
            api.recount(found)  # Slack counts the replies that are there
    return {"channel": channel, "ts": message["ts"]}


@method("chat.postEphemeral")
def _ephemeral(api: SlackWebApi, args: Args) -> Args:
    channel, user = api.channel(args), str(args.get("user") or "")
    if user not in api.layout.people:
        raise Refused("user_not_in_channel")
    message = api.bot_message(channel, args.get("thread_ts"), kept_text(args.get("text")), None)
    message["_to"] = user  # only this person sees it, and it is no reply of the thread's
    message["ts"] = api.workspace.next_ts()
    message.pop("thread_ts", None)
    message["_thread"] = str(args.get("thread_ts") or "")
    api.workspace.save(message)
    return {"message_ts": message["ts"]}


@method("usergroups.users.list")
def _usergroup_members(api: SlackWebApi, args: Args) -> Args:
    members = api.layout.usergroups.get(str(args.get("usergroup") or ""))
    if members is None:
        raise Refused("no_such_subteam")
    return {"users": list(members)}


@method("chat.startStream")
def _start_stream(api: SlackWebApi, args: Args) -> Args:
    channel, thread_ts = api.channel(args), str(args.get("thread_ts") or "")
    if not thread_ts:
        raise Refused("invalid_arguments", "thread_ts is required: a stream is a reply in a thread")
    found = valid_chunks(args.get("chunks"), args.get("markdown_text"))
    message = api.bot_message(channel, thread_ts, "", None)
    mode = str(args.get("task_display_mode") or "timeline")
    message["_stream"] = {"state": "streaming", "chunks": [], "mode": mode}
    message = api.post(_appended(message, found))
    api.said_in(channel, thread_ts)
    return {"channel": channel, "ts": message["ts"]}


@method("chat.appendStream")
def _append_stream(api: SlackWebApi, args: Args) -> Args:
    channel = api.channel(args)
    found = valid_chunks(args.get("chunks"), args.get("markdown_text"))
    with api.workspace.lock:
        message = _streaming(api, channel, args.get("ts"))
        api.workspace.save(_appended(message, found))
    return {"channel": channel, "ts": message["ts"]}


@method("chat.stopStream")
def _stop_stream(api: SlackWebApi, args: Args) -> Args:
    channel, blocks = api.channel(args), valid_blocks(args.get("blocks"))
    found = valid_chunks(args.get("chunks"), args.get("markdown_text"))
    with api.workspace.lock:
        message = _appended(_streaming(api, channel, args.get("ts")), found)
        message["_stream"]["state"] = "stopped"
        if blocks is not None:
            message["blocks"] = with_ids(blocks)
        api.workspace.save(message)
    return {"channel": channel, "ts": message["ts"], "message": shown(message)}


def _streaming(api: SlackWebApi, channel: str, ts: Any) -> Args:
    message = api.found(channel, ts)
    if (message.get("_stream") or {}).get("state") != "streaming":
        raise Refused("message_not_in_streaming_state")
    return message


def _appended(message: Args, chunks: list[Args]) -> Args:
    """The chunks kept in order (the page draws text and task cards as they came); the text is the markdown's."""
    stream = message["_stream"]
    stream["chunks"] = [*stream["chunks"], *chunks]
    added = "".join(str(c.get("text") or "") for c in chunks if c.get("type") == "markdown_text")
    message["text"] = kept_text(str(message.get("text") or "") + added)
    return message
