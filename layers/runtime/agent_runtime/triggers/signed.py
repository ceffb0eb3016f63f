"""Signed webhooks from other systems: ``POST /hooks/<workflow>`` for a workflow with ``triggers.webhook``.

Verified like Slack's and JIRA's requests, by an HMAC-SHA256 of the body with a key of the integrations secret:
GitHub's form as it is (``X-Hub-Signature-256: sha256=<hex>``, the delivery in ``X-GitHub-Delivery``, the event in
``X-GitHub-Event``; a ``ping`` starts nothing), or ``hmac`` for any sender that signs ``<timestamp>.<body>``
(``X-Signature-256: sha256=<hex>``, ``X-Signature-Timestamp`` within 5 minutes, ``X-Delivery-Id``), or Notion's
(``X-Notion-Signature: sha256=<hex>`` keyed by the subscription's verification token; the event's ``id`` and
``type`` in the body; its unsigned handshake is kept for the admin: ``handshakes``). A delivery is deduplicated by
its id; the JSON body becomes the run's file ``delivery.json``, and the workflow's ``message`` path picks the run's
message from it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..workflows import Workflow
from ..workflows.triggers import WebhookTrigger
from .event import Attachment, Ignored, TriggerEvent
from .exceptions import RejectedRequest
from .handshakes import handshake_token
from .payload import parse_json

MAX_BODY_BYTES = 1024 * 1024  # a GitHub delivery is at most 25 MB, but a pull request's is ~30 KB
MAX_SKEW_SECONDS = 300
MAX_MESSAGE_CHARS = 4_000
_DELIVERY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_STEP = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d{1,4})\]")
_KIND = re.compile(r"[a-z_]{1,64}(\.[a-z_]{1,64}){0,3}")  # pull_request; Notion's page.properties_updated


@dataclass(frozen=True, slots=True)
class Handshake:
    """Notion's one unsigned request to a new subscription: the token the admin pastes back into Notion."""

    token: str


def parse(
    headers: Mapping[str, str], body: bytes, workflow: Workflow, secret: str | None, now: float
) -> TriggerEvent | Ignored | Handshake:
    """The delivery as an event for ``workflow``; a ``RejectedRequest`` for a forged, stale or oversized one."""
    rule = workflow.triggers.webhook
    if rule is None:
        raise RejectedRequest(404, "no workflow takes webhooks at this route")
    if len(body) > MAX_BODY_BYTES:
        raise RejectedRequest(413, f"the body is larger than {MAX_BODY_BYTES // 1024} KB")
    headers = {k.lower(): v for k, v in headers.items()}
    if rule.signature == "notion" and "x-notion-signature" not in headers:
        token = handshake_token(parse_json(body, "the request"))
        if token is None:
            raise RejectedRequest(401, "invalid webhook signature (no X-Notion-Signature)")
        return Handshake(token)
    if not secret:
        raise RejectedRequest(401, f"the webhook's secret ({rule.secret}) is not configured")
    delivery, kind, payload = _verified(rule, headers, body, secret, now)
    if kind == "ping" or (rule.events and kind not in rule.events):
        return Ignored(f"a {kind} delivery: the workflow takes {', '.join(rule.events) or 'all but ping'}")
    text = _message(payload, rule.message) or f"A {kind} delivery arrived: it is the file delivery.json."
    url = "data:application/json;base64," + base64.b64encode(body).decode("ascii")
    return TriggerEvent(
        source="webhook",
        kind=kind,
        dedup_key=f"webhook:{workflow.name}:{delivery}",
        text=text[:MAX_MESSAGE_CHARS],
        user=_sender(payload) or f"webhook:{workflow.name}",
        thread_id=f"webhook-{workflow.name}-{hashlib.sha256(delivery.encode()).hexdigest()[:16]}",
        correlation_id=delivery,
        attributes={"webhook": workflow.name, "event": kind},
        attachments=(Attachment("delivery.json", url, len(body), "application/json"),),
        workflow=workflow.name,
    )


def _verified(
    rule: WebhookTrigger, headers: Mapping[str, str], body: bytes, secret: str, now: float
) -> tuple[str, str, Any]:
    """The delivery id, the event's kind and the body, once the signature holds."""
    if rule.signature == "github":
        signed, signature = body, headers.get("x-hub-signature-256", "")
        delivery, kind = headers.get("x-github-delivery", ""), headers.get("x-github-event", "")
    elif rule.signature == "notion":  # the id and type are the body's: read once the signature holds
        signed, signature, delivery, kind = body, headers.get("x-notion-signature", ""), "", ""
    else:
        stamp = headers.get("x-signature-timestamp", "")
        if not stamp.isdigit() or abs(now - int(stamp)) > MAX_SKEW_SECONDS:
            raise RejectedRequest(401, "stale or missing X-Signature-Timestamp (more than 5 minutes off: replay?)")
        signed, signature = stamp.encode() + b"." + body, headers.get("x-signature-256", "")
        delivery, kind = headers.get("x-delivery-id", ""), "webhook"
    expected = "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, signature):
        raise RejectedRequest(401, "invalid webhook signature")
    payload = parse_json(body, "the delivery")
    if rule.signature == "notion" and isinstance(payload, dict):
        delivery, kind = str(payload.get("id") or ""), str(payload.get("type") or "")
    if not _DELIVERY.fullmatch(delivery):
        raise RejectedRequest(400, "the delivery id is missing or malformed")
    if not _KIND.fullmatch(kind):
        raise RejectedRequest(400, "the event name is missing or malformed")
    return delivery, kind, payload


def _sender(payload: Any) -> str | None:
    """Who caused the delivery: GitHub's ``sender.login``, Notion's first author's id."""
    if not isinstance(payload, dict):
        return None
    sender, authors = payload.get("sender"), payload.get("authors")
    if isinstance(sender, dict) and isinstance(sender.get("login"), str):
        return str(sender["login"])[:100]
    if isinstance(authors, list) and authors and isinstance(authors[0], dict) and authors[0].get("id"):
        return str(authors[0]["id"])[:100]
    return None


def _message(payload: Any, path: str | None) -> str | None:
    """The field ``path`` points at (``$.pull_request.title``, ``items[0].name``), as text; None if absent."""
    if path is None:
        return None
    node = payload
    for name, index in _STEP.findall(path.removeprefix("$")):
        if name and isinstance(node, dict):
            node = node.get(name)
        elif index and isinstance(node, list) and int(index) < len(node):
            node = node[int(index)]
        else:
            return None
    if node is None:
        return None
    return node if isinstance(node, str) else json.dumps(node, ensure_ascii=False)
