"""Slack Events API: signature check (Slack's v0 scheme) and parsing into a :class:`TriggerEvent`."""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..actions import APPROVE, DENY, FEEDBACK, STOP
from ..errors import ConfigError
from ..ids import RUN_ID, check_thread_id
from ..inbound import Attachment, Challenge, Ignored, PaneEvent, TriggerEvent
from . import fields
from .exceptions import RejectedRequest
from .payload import parse_json

_MENTION = re.compile(r"<@[A-Z0-9]+>\s*")
# Message subtypes that are edits, deletions, joins or bots: nobody asked the agent anything.
_HANDLED_SUBTYPES = {None, "file_share", "thread_broadcast"}
# The app's own pane: opened (agent view: the Messages tab; assistant view: a new assistant thread), and the
# channel a person looks at beside an assistant thread.
PANE_EVENTS = ("app_home_opened", "assistant_thread_started", "assistant_thread_context_changed")
_SLACK_ID = re.compile(r"[A-Z0-9]{2,40}")  # used with fullmatch: "C0VIEW\n" is not an id
_PLAIN_EMOJI = re.compile(r"[A-Za-z0-9_-]{1,100}")  # no '.': a digest's suffix starts with one
NAME_CHARS = 80  # a rater's name as kept: Slack's user names are at most 80 characters


def verify(headers: Mapping[str, str], body: bytes, signing_secret: str, *, now: float | None = None) -> None:
    """Raise :class:`RejectedRequest` unless the v0 signature matches and the timestamp is within 5 minutes. Both
    headers are read by the requests' strict parser first (slack_sdk's ``int`` and ``compare_digest`` raise on
    what it refuses). slack_sdk's verifier is imported with the first Slack request, not at the webhook's init: its
    package imports the whole Web API client (~13 ms), which no other route needs."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if not lowered.get("x-slack-request-timestamp") or not lowered.get("x-slack-signature"):
        raise RejectedRequest(401, "unsigned Slack request (no X-Slack-Signature / X-Slack-Request-Timestamp)")
    timestamp = lowered["x-slack-request-timestamp"]
    stamp = fields.number(timestamp, "X-Slack-Request-Timestamp", high=fields.UNIX_TIME_HIGH)
    signature = fields.signature(lowered["x-slack-signature"], "X-Slack-Signature", prefix="v0=")
    at = time.time() if now is None else now
    if abs(at - stamp) > 60 * 5:
        raise RejectedRequest(401, "stale Slack request: timestamp outside the 5-minute window (replay?)")
    from slack_sdk.signature import Clock, SignatureVerifier

    class _At(Clock):  # the time this check was asked at, so the window above and the verifier's agree
        def now(self) -> float:
            return at

    if not SignatureVerifier(signing_secret, clock=_At()).is_valid(body, timestamp, signature):
        raise RejectedRequest(401, "forged Slack request: signature mismatch")


def parse(body: bytes, *, bot_user_id: str | None) -> TriggerEvent | PaneEvent | Ignored | Challenge:
    payload = parse_json(body, "Slack body")
    if not isinstance(payload, dict):
        raise RejectedRequest(400, "Slack body is not a JSON object")
    if payload.get("type") == "url_verification":
        return Challenge(str(payload.get("challenge", "")))
    if payload.get("type") != "event_callback" or not isinstance(payload.get("event"), dict):
        return Ignored(f"Slack payload type {_said(payload.get('type'))}")
    event, event_id = payload["event"], payload.get("event_id")
    if not isinstance(event_id, str) or not event_id:
        raise RejectedRequest(400, "Slack event without event_id")
    team = _team(payload, event)
    if team is None:
        return Ignored("a Slack event whose team is not a Slack id")
    if event.get("type") in PANE_EVENTS:
        return _pane(team, event, event_id)
    if event.get("type") == "reaction_added":
        return _reaction(team, payload, event, bot_user_id)
    reason = _skip_reason(event, bot_user_id)
    return Ignored(reason) if reason else _trigger(team, event, event_id)


def _reaction(
    team: str, payload: dict[str, Any], event: dict[str, Any], bot_user_id: str | None
) -> TriggerEvent | Ignored:
    """An emoji added to a message: one run per message and emoji, whoever adds it (again) — but the bot itself,
    as its own messages start nothing (a workflow that marks messages must not start the one that reads marks).
    The message itself is read by the worker (``reactions.get``): the webhook answers within Slack's 3 s."""
    item, user, reaction = _mapping(event.get("item")), event.get("user"), event.get("reaction")
    channel, ts = item.get("channel"), item.get("ts")
    if item.get("type") != "message" or not isinstance(reaction, str) or not reaction:
        return Ignored("a reaction to something other than a message")
    if isinstance(user, str) and user in _bots(payload, bot_user_id):
        return Ignored("the bot's own reaction")
    if not (_is_id(channel) and _is_id(user) and _is_ts(ts)):
        return Ignored("reaction_added without channel, user or message ts")
    return TriggerEvent(
        source="slack",
        kind="reaction_added",
        dedup_key=f"slack-reaction:{team}:{channel}:{ts}:{emoji_key(reaction)}",
        text="",
        user=str(user),
        thread_id=f"slack-{team}-{channel}-{ts}-{emoji_key(reaction)}",
        correlation_id=str(payload.get("event_id")),
        reply_to={"channel": str(channel), "thread_ts": str(ts)},  # the message's thread: the worker reads it
        attributes={"channel": channel, "direct_message": False, "team": team, "ts": ts, "reaction": reaction[:100]},
    )


def emoji_key(reaction: str) -> str:
    """The emoji's name as a thread id and a dedup key take it, one per name: as it is when it is letters, digits,
    '_' and '-' (up to 100), else what it has of those and its digest (":+1:" and ":-1:" were one thread, and two
    names alike in their first 100 characters one key: the second emoji's run was lost or went on in the first's)."""
    if _PLAIN_EMOJI.fullmatch(reaction):
        return reaction
    return re.sub(r"[^A-Za-z0-9_-]", "-", reaction[:40]) + "." + hashlib.sha256(reaction.encode()).hexdigest()[:16]


def _bots(payload: dict[str, Any], bot_user_id: str | None) -> set[str]:
    """The bot's user id: configured (SLACK_BOT_USER_ID), or the app's own installation as Slack's envelope names
    it (``authorizations``: the bot user the event is delivered to)."""
    given = payload.get("authorizations")
    found = (
        {a.get("user_id") for a in given if isinstance(a, dict) and a.get("is_bot")}
        if isinstance(given, list)
        else set()
    )
    return {u for u in {*found, bot_user_id} if isinstance(u, str) and u}


def _is_ts(value: Any) -> bool:
    return isinstance(value, str) and re.fullmatch(r"\d{1,12}\.\d{1,8}", value) is not None


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and _SLACK_ID.fullmatch(value) is not None


def _team(payload: dict[str, Any], event: dict[str, Any]) -> str | None:
    """The workspace's id: the envelope's, else the event's, else ``T`` (neither says: one workspace); None for
    one that is not an id (it names the thread, and the queue's message group)."""
    given = payload.get("team_id") or event.get("team")
    return "T" if given is None or given == "" else given if _is_id(given) else None


def _said(value: Any) -> str:
    """A field of the payload in a reason said back: its repr, cut (a signed payload can still be hostile)."""
    return repr(value)[:40]


def _skip_reason(event: dict[str, Any], bot_user_id: str | None) -> str | None:
    kind = event.get("type")
    if kind not in ("app_mention", "message"):
        return f"Slack event type {_said(kind)}"
    if event.get("bot_id") or (bot_user_id and event.get("user") == bot_user_id):
        return "the bot's own message"
    subtype = event.get("subtype")
    if not (subtype is None or isinstance(subtype, str)) or subtype not in _HANDLED_SUBTYPES:
        return f"message subtype {_said(subtype)} (edits, deletions and joins start nothing)"
    if kind == "message" and event.get("channel_type") != "im":
        return "channel message without a mention (mentions arrive as app_mention)"
    ts, thread_ts = event.get("ts"), event.get("thread_ts")
    if not (_is_id(event.get("channel")) and _is_id(event.get("user")) and _is_ts(ts) and _is_ts(thread_ts or ts)):
        return "Slack event without channel, ts or user"
    return None


def attachments(message: Mapping[str, Any]) -> tuple[Attachment, ...]:
    """The files of a Slack message (an event's, or one read back with the Web API) that the bot can download."""
    files = message.get("files")
    return tuple(
        Attachment(str(f.get("name") or f.get("id")), f["url_private"], _size(f.get("size")), _text(f.get("mimetype")))
        for f in (files if isinstance(files, list) else ())
        if isinstance(f, dict) and isinstance(f.get("url_private"), str) and f["url_private"]
    )


def _size(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def thread_id(team: str, channel: str, thread_ts: str) -> str:
    """The id of the conversation a Slack thread carries (its mentions' runs go on in it)."""
    return f"slack-{team}-{channel}-{thread_ts}"


def _trigger(team: str, event: dict[str, Any], event_id: str) -> TriggerEvent:
    channel, thread_ts = str(event["channel"]), str(event.get("thread_ts") or event["ts"])
    files = attachments(event)
    is_dm = event.get("channel_type") == "im"
    facts = {"channel": channel, "direct_message": is_dm, "team": team, "ts": str(event["ts"])}
    if isinstance(event.get("assistant_thread"), dict):  # written in an assistant thread (the assistant view)
        facts["assistant_thread"] = True
    return TriggerEvent(
        source="slack",
        kind="message" if is_dm else "app_mention",
        dedup_key=f"slack:{event_id}",
        text=_MENTION.sub("", _text(event.get("text")) or "").strip(),
        user=str(event["user"]),
        thread_id=thread_id(team, channel, thread_ts),
        correlation_id=event_id,
        reply_to={"channel": channel, "thread_ts": thread_ts},
        attributes=facts,
        attachments=files,
    )


def says_stop(event: TriggerEvent) -> bool:
    """A reply in a Slack thread that is only "stop" (a mention's name aside): it stops the run working there, as
    the Stop button does — the way to stop a run in the app's pane, where a status, not a message, shows it works.
    Asked of Slack's messages only (``sources.slack_mention``)."""
    replied = event.reply_to.get("thread_ts") != event.attributes.get("ts")
    return replied and event.text.strip(" .!").lower() == "stop"


def _pane(team: str, event: dict[str, Any], event_id: str) -> PaneEvent | Ignored:
    """``app_home_opened`` on the Messages tab (agent view), ``assistant_thread_started`` and
    ``assistant_thread_context_changed`` (assistant view) as a :class:`PaneEvent`."""
    if event["type"] == "app_home_opened":
        if event.get("tab") != "messages":
            return Ignored("the app's Home tab was opened")
        channel, user, thread_ts, viewing = event.get("channel"), event.get("user"), None, None
    else:
        thread = _mapping(event.get("assistant_thread"))
        context = _mapping(thread.get("context"))
        channel, user, thread_ts = thread.get("channel_id"), thread.get("user_id"), thread.get("thread_ts")
        viewing = context.get("channel_id")
        if not _is_ts(thread_ts):
            return Ignored(f"{event['type']} without a thread")
    if not (_is_id(channel) and _is_id(user)):
        return Ignored(f"{event['type']} without channel or user")
    return PaneEvent(
        kind="context" if event["type"] == "assistant_thread_context_changed" else "opened",
        dedup_key=f"slack:{event_id}",
        team=team,
        channel=str(channel),
        user=str(user),
        thread_ts=thread_ts,
        viewing=viewing if _is_id(viewing) else None,  # an id, or nothing
    )


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class Action:
    """A click on a button: the message for the worker, the FIFO group it goes in (the thread; a stop: its own) and a
    dedup key (a replay within SQS's window is dropped). ``once``: kept out by an idempotency record for a day too
    (a rating replayed late would undo the person's later one; a decision's and a stop's writes are first-wins)."""

    message: dict[str, Any]
    thread_id: str
    dedup_key: str
    once: bool = False


def parse_action(body: bytes) -> Action | Ignored:
    """An interactivity request (form-encoded ``payload``): Approve or Deny on an approval message."""
    from urllib.parse import parse_qs

    from .queued import DecisionMessage

    try:
        raw = parse_qs(body.decode("utf-8"), max_num_fields=8)["payload"][0]
    except (KeyError, IndexError, UnicodeDecodeError, ValueError):
        raise RejectedRequest(400, "malformed Slack interactivity request (no payload field)") from None
    payload = parse_json(raw, "the interactivity payload")
    actions = payload.get("actions") if isinstance(payload, dict) else None
    if not isinstance(payload, dict) or payload.get("type") != "block_actions" or not isinstance(actions, list):
        return Ignored("not a button click")
    if not actions:
        return Ignored("not a button click")
    action = actions[0] if isinstance(actions[0], dict) else {}
    if action.get("action_id") == FEEDBACK:
        return _feedback(payload, action)
    if action.get("action_id") == STOP:
        return _stop(payload, action)
    if action.get("action_id") not in (APPROVE, DENY):
        return Ignored(f"not an approval button: {str(action.get('action_id'))[:40]!r}")
    (run_id, call_id, thread_id), user, dedup = _clicked(payload, action, 3, "approval", thread_at=2)
    decision = "approved" if action["action_id"] == APPROVE else "denied"
    return Action(DecisionMessage(run_id, call_id, decision, user).body(), thread_id, dedup)


def _clicked(
    payload: dict[str, Any], action: dict[str, Any], count: int, button: str, *, thread_at: int = 1
) -> tuple[list[str], str, str]:
    """A click's value (``count`` non-empty parts joined by ``|``: the run's id, and its thread's at ``thread_at``),
    who clicked, and its dedup key (Slack's trigger id, else the action's time); a 400 when any is missing or is
    not what the app's buttons carry (they go to the queue: the thread names its message group)."""
    parts = str(action.get("value", "")).split("|")
    user, said = _mapping(payload.get("user")).get("id"), payload.get("trigger_id") or action.get("action_ts")
    if not (len(parts) == count and all(parts) and _is_id(user) and isinstance(said, str)):
        raise RejectedRequest(400, f"malformed {button} button (value or user missing)")
    if not (RUN_ID.fullmatch(parts[0]) and _is_thread(parts[thread_at])):
        raise RejectedRequest(400, f"malformed {button} button (not a run id and thread id)")
    return parts, str(user), f"slack-action:{said}"


def _is_thread(value: str) -> bool:
    try:
        return bool(check_thread_id(value))
    except ConfigError:
        return False


def _stop(payload: dict[str, Any], action: dict[str, Any]) -> Action:
    """A click on a working run's Stop button: its value is ``run_id|thread_id``. Queued in a group of its own
    (the run holds its thread's group while it works); the worker checks who clicked."""
    from .queued import StopMessage

    (run_id, _thread), user, dedup = _clicked(payload, action, 2, "stop")
    return Action(StopMessage(run_id, user, "slack").body(), f"stop:{run_id}", dedup)


def _feedback(payload: dict[str, Any], action: dict[str, Any]) -> Action:
    """A click on an answer's feedback buttons: its value is ``run_id|thread_id|good`` (or ``bad``)."""
    from .queued import VERDICTS, FeedbackMessage

    (run_id, thread_id, verdict), user, dedup = _clicked(payload, action, 3, "feedback")
    if verdict not in VERDICTS:
        raise RejectedRequest(400, "malformed feedback button (value or user missing)")
    return Action(FeedbackMessage(run_id, verdict, user, _name(payload)).body(), thread_id, dedup, once=True)


def _name(payload: dict[str, Any]) -> str:
    """The clicker's name as the payload gives it (``user.name``, else ``username``; "" when neither): the rating
    keeps it, so the run's page names the person without a users.info call (which needs users:read)."""
    person = payload.get("user")
    if not isinstance(person, dict):
        return ""
    found = (person.get(key) for key in ("name", "username"))
    return next((value.strip()[:NAME_CHARS] for value in found if isinstance(value, str) and value.strip()), "")
