"""JIRA Cloud webhooks: admin webhooks signed with ``X-Hub-Signature: sha256=...``, Automation "send web request"
with a shared-secret header, and parsing of ``comment_created`` / ``jira:issue_created`` into a TriggerEvent.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import re
import time
from collections.abc import Mapping
from typing import Any

from ..adf import adf_text
from ..inbound import Attachment, Ignored, TriggerEvent
from . import fields
from .exceptions import RejectedRequest
from .payload import parse_json

SHARED_SECRET_HEADER = "x-webhook-secret"  # what an Automation rule's "send web request" adds as a header
MAX_SKEW_SECONDS = 600
MAX_AGE_SECONDS = 2 * 3600  # JIRA retries for about 30 minutes; anything much older is a replay
ISSUE_KEY = re.compile(r"[A-Z][A-Z0-9_]{0,99}-[0-9]{1,18}")  # it names the thread: PROJ-1423
ID = re.compile(r"[A-Za-z0-9_-]{1,128}")  # JIRA's are digits; a dedup key's part all the same


def verify(headers: Mapping[str, str], body: bytes, *, webhook_secret: str | None, shared_secret: str | None) -> None:
    """Either header read by the requests' strict parser first, then compared in constant time."""
    lowered = {k.lower(): v for k, v in headers.items()}
    if lowered.get("x-hub-signature") is not None:
        signature = fields.signature(lowered["x-hub-signature"], "X-Hub-Signature")
        if not webhook_secret:
            raise RejectedRequest(401, "signed JIRA request but no JIRA webhook secret is configured")
        expected = "sha256=" + hmac.new(webhook_secret.encode(), body, hashlib.sha256).hexdigest()
        if not fields.same(signature, expected):
            raise RejectedRequest(401, "forged JIRA request: X-Hub-Signature mismatch")
        return
    if lowered.get(SHARED_SECRET_HEADER) is not None:
        shared = fields.text(lowered[SHARED_SECRET_HEADER], "X-Webhook-Secret")
        if not shared_secret or not fields.same(shared, shared_secret):
            raise RejectedRequest(401, "forged JIRA request: wrong X-Webhook-Secret")
        return
    raise RejectedRequest(401, "unsigned JIRA request (no X-Hub-Signature or X-Webhook-Secret)")


def parse(body: bytes, *, bot_account_id: str | None, now: float | None = None) -> TriggerEvent | Ignored:
    payload = parse_json(body, "JIRA body")
    if not isinstance(payload, dict) or not isinstance(payload.get("issue"), dict):
        raise RejectedRequest(400, "JIRA payload without an issue")
    _check_age(payload.get("timestamp"), now if now is not None else time.time())
    kind = payload.get("webhookEvent")
    comment = payload.get("comment") if isinstance(payload.get("comment"), dict) else None
    if kind == "jira:issue_updated" and payload.get("issue_event_type_name") == "issue_commented" and comment:
        kind = "comment_created"  # the same comment, delivered twice: one dedup key for both
    if kind == "comment_created" and comment:
        if bot_account_id and _mapping(comment.get("author")).get("accountId") == bot_account_id:
            return Ignored("the bot's own comment")
        said = adf_text(comment.get("body"))
        return _trigger(payload, "comment_created", f"jira:comment:{_id(comment, 'comment')}", said)
    if kind == "jira:issue_created":
        fields = _mapping(payload["issue"].get("fields"))
        if bot_account_id and _mapping(fields.get("reporter")).get("accountId") == bot_account_id:
            return Ignored("an issue the bot created")
        text = "\n\n".join(p for p in (_text(fields.get("summary")), adf_text(fields.get("description"))) if p)
        return _trigger(payload, "issue_created", f"jira:issue:{_id(payload['issue'], 'issue')}:created", text)
    return Ignored(f"JIRA event {repr(kind)[:40]}")


def _trigger(payload: dict[str, Any], kind: str, dedup_key: str, text: str) -> TriggerEvent:
    issue = payload["issue"]
    fields, key = _mapping(issue.get("fields")), issue.get("key")
    if not (isinstance(key, str) and ISSUE_KEY.fullmatch(key)):
        raise RejectedRequest(400, "JIRA issue without a key (PROJECT-123)")
    files = [
        Attachment(
            _text(a.get("filename")) or "attachment",
            a["content"],
            _size(a.get("size")),
            _text(a.get("mimeType")) or None,
        )
        for a in _list(fields.get("attachment"))
        if isinstance(a, dict) and isinstance(a.get("content"), str) and a["content"]
    ]
    user = _mapping(_mapping(payload.get("comment")).get("author") or payload.get("user"))
    return TriggerEvent(
        source="jira",
        kind=kind,
        dedup_key=dedup_key,
        text=text,
        user=_text(user.get("accountId")),
        thread_id=f"jira-{key}",
        correlation_id=key,
        reply_to={"issue_key": key},
        attributes={
            "project": _text(_mapping(fields.get("project")).get("key")) or key.split("-")[0],
            "issue_type": _text(_mapping(fields.get("issuetype")).get("name")),
            "labels": [label for label in _list(fields.get("labels")) if isinstance(label, str)],
            "event": kind,
        },
        attachments=tuple(files),
    )


def _id(item: dict[str, Any], what: str) -> str:
    """A comment's or an issue's id (JIRA's are digits, given as a string or a number): its dedup key."""
    found = item.get("id")
    if isinstance(found, bool) or not isinstance(found, str | int) or not ID.fullmatch(str(found)):
        raise RejectedRequest(400, f"JIRA {what} without an id")
    return str(found)


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _size(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _check_age(stamp: Any, now: float) -> None:
    """JIRA's ``timestamp`` (ms) of any JSON type: a number or a numeric string within the last 2 hours and
    no more than 10 minutes ahead (Slack's skew); anything else is refused, never skipped."""
    if stamp is None:
        return
    try:
        seconds = float(stamp) / 1000 if not isinstance(stamp, bool) else math.nan
    except (TypeError, ValueError):
        seconds = math.nan
    if not math.isfinite(seconds):
        raise RejectedRequest(400, f"JIRA timestamp is not a number: {str(stamp)[:40]!r}")
    if now - seconds > MAX_AGE_SECONDS:
        raise RejectedRequest(401, "stale JIRA event: older than 2 hours (replay?)")
    if seconds - now > MAX_SKEW_SECONDS:
        raise RejectedRequest(401, "JIRA event from the future: more than 10 minutes ahead (replay?)")
