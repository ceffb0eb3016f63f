"""JIRA Cloud webhooks: admin webhooks signed with ``X-Hub-Signature: sha256=...``, Automation "send web request"
with a shared-secret header, and parsing of ``comment_created`` / ``jira:issue_created`` into a TriggerEvent.
"""

from __future__ import annotations

import hashlib
import hmac
import math
import time
from collections.abc import Mapping
from typing import Any

from ..adf import adf_text
from . import fields
from .event import Attachment, Ignored, TriggerEvent
from .exceptions import RejectedRequest
from .payload import parse_json

SHARED_SECRET_HEADER = "x-webhook-secret"  # what an Automation rule's "send web request" adds as a header
MAX_SKEW_SECONDS = 600
MAX_AGE_SECONDS = 2 * 3600  # JIRA retries for about 30 minutes; anything much older is a replay


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
        author = (comment.get("author") or {}).get("accountId")
        if bot_account_id and author == bot_account_id:
            return Ignored("the bot's own comment")
        return _trigger(payload, "comment_created", f"jira:comment:{comment.get('id')}", adf_text(comment.get("body")))
    if kind == "jira:issue_created":
        fields = payload["issue"].get("fields") or {}
        if bot_account_id and ((fields.get("reporter") or {}).get("accountId") == bot_account_id):
            return Ignored("an issue the bot created")
        text = "\n\n".join(p for p in (str(fields.get("summary") or ""), adf_text(fields.get("description"))) if p)
        return _trigger(payload, "issue_created", f"jira:issue:{payload['issue'].get('id')}:created", text)
    return Ignored(f"JIRA event {kind!r}")


def _trigger(payload: dict[str, Any], kind: str, dedup_key: str, text: str) -> TriggerEvent:
    issue = payload["issue"]
    fields = issue.get("fields") or {}
    key = str(issue.get("key") or "")
    if not key:
        raise RejectedRequest(400, "JIRA issue without a key")
    files = [
        Attachment(str(a.get("filename")), str(a["content"]), a.get("size"), a.get("mimeType"))
        for a in fields.get("attachment") or []
        if isinstance(a, dict) and a.get("content")
    ]
    user = (payload.get("comment") or {}).get("author") or payload.get("user") or {}
    return TriggerEvent(
        source="jira",
        kind=kind,
        dedup_key=dedup_key,
        text=text,
        user=str(user.get("accountId") or ""),
        thread_id=f"jira-{key}",
        correlation_id=key,
        reply_to={"issue_key": key},
        attributes={
            "project": str((fields.get("project") or {}).get("key") or key.split("-")[0]),
            "issue_type": str((fields.get("issuetype") or {}).get("name") or ""),
            "labels": [str(label) for label in fields.get("labels") or []],
            "event": kind,
        },
        attachments=tuple(files),
    )


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
