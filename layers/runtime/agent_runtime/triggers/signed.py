"""Signed webhooks from other systems: ``POST /hooks/<workflow>`` for a workflow with ``triggers.webhook``.

Verified like Slack's and JIRA's requests, by an HMAC-SHA256 of the body with a key of the integrations secret:
GitHub's form as it is (``X-Hub-Signature-256: sha256=<hex>``, the delivery in ``X-GitHub-Delivery``, the event in
``X-GitHub-Event``; a ``ping`` starts nothing), or ``hmac`` for any sender that signs ``<timestamp>.<body>``
(``X-Signature-256: sha256=<hex>``, ``X-Signature-Timestamp`` within 5 minutes, ``X-Delivery-Id``), or Notion's
(``X-Notion-Signature: sha256=<hex>`` keyed by the subscription's verification token; the event's ``id`` and
``type`` in the body; its unsigned handshake is kept for the admin: ``handshakes``). A delivery is deduplicated by
what its sender signed, since the delivery-id headers are not: GitHub's by its body (a redelivery is the same
body), Notion's by the event id in its body, ``hmac``'s by its delivery id and by its signed timestamp and body
(a replay within the 5 minutes with a new id is a duplicate). The JSON body becomes the run's file
``delivery.json``, and the workflow's ``message`` path picks the run's message from it."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..inbound import Attachment, Ignored, TriggerEvent
from . import fields
from .exceptions import RejectedRequest
from .handshakes import handshake_token
from .payload import parse_json

if TYPE_CHECKING:
    from ..workflows import Workflow
    from ..workflows.triggers import WebhookTrigger

MAX_BODY_BYTES = 1024 * 1024  # a GitHub delivery is at most 25 MB, but a pull request's is ~30 KB
MAX_SKEW_SECONDS = 300
MAX_MESSAGE_CHARS = 4_000
_DELIVERY = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
_STEP = re.compile(r"\.?([A-Za-z_][A-Za-z0-9_-]*)|\[(\d{1,4})\]")
_KIND = re.compile(r"[a-z_]{1,64}(\.[a-z_]{1,64}){0,3}")  # pull_request; Notion's page.properties_updated
_SIGNATURE = {"github": "x-hub-signature-256", "hmac": "x-signature-256", "notion": "x-notion-signature"}


@dataclass(frozen=True, slots=True)
class Handshake:
    """Notion's one unsigned request to a new subscription: the token the admin pastes back into Notion."""

    token: str


@dataclass(frozen=True, slots=True)
class Delivery:
    """A verified delivery's event, and the key of what its sender signed when the event's own key is not signed
    (``hmac``'s ``X-Delivery-Id``): the webhook deduplicates by both, so a replay with a new id is a duplicate."""

    event: TriggerEvent
    signed_key: str | None = None


def parse(
    headers: Mapping[str, str], body: bytes, workflow: Workflow, secret: str | None, now: float, *, unset: str = ""
) -> Delivery | Ignored | Handshake:
    """The delivery as an event for ``workflow``; a ``RejectedRequest`` for a forged, stale or oversized one.
    ``unset``: where the secret is looked for, said when it is not configured."""
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
        raise RejectedRequest(401, f"the webhook's secret is not configured ({unset or rule.secret})")
    verified = _verified(rule, headers, body, secret, now)
    if verified.kind == "ping" or (rule.events and verified.kind not in rule.events):
        return Ignored(f"a {verified.kind} delivery: the workflow takes {', '.join(rule.events) or 'all but ping'}")
    signed_key = f"webhook:{workflow.name}:{verified.signed_key}" if verified.signed_key else None
    return Delivery(_event(workflow, verified, body), signed_key)


def _event(workflow: Workflow, verified: _Verified, body: bytes) -> TriggerEvent:
    rule, payload, kind = workflow.triggers.webhook, verified.payload, verified.kind
    text = (
        _message(payload, rule.message if rule else None) or f"A {kind} delivery arrived: it is the file delivery.json."
    )
    url = "data:application/json;base64," + base64.b64encode(body).decode("ascii")
    return TriggerEvent(
        source="webhook",
        kind=kind,
        dedup_key=f"webhook:{workflow.name}:{verified.key}",
        text=text[:MAX_MESSAGE_CHARS],
        user=_sender(payload) or f"webhook:{workflow.name}",
        thread_id=f"webhook-{workflow.name}-{hashlib.sha256(verified.key.encode()).hexdigest()[:16]}",
        correlation_id=verified.delivery,
        attributes={"webhook": workflow.name, "event": kind},
        attachments=(Attachment("delivery.json", url, len(body), "application/json"),),
        workflow=workflow.name,
    )


@dataclass(frozen=True, slots=True)
class _Verified:
    delivery: str  # the sender's delivery id (GitHub's, hmac's: unsigned headers; Notion's: in the signed body)
    kind: str
    payload: Any
    key: str  # the event's own key: the delivery id where it is signed (Notion), the body's digest for GitHub
    signed_key: str | None  # hmac: the digest of the signed timestamp and body (its delivery id is not signed)


def _verified(rule: WebhookTrigger, headers: Mapping[str, str], body: bytes, secret: str, now: float) -> _Verified:
    """The delivery, once the signature holds. Every header is read by the requests' strict parser (``fields``)
    before anything else reads it."""
    signed = body
    if rule.signature == "hmac":
        stamp = headers.get("x-signature-timestamp")
        if abs(now - fields.number(stamp, "X-Signature-Timestamp", high=fields.UNIX_TIME_HIGH)) > MAX_SKEW_SECONDS:
            raise RejectedRequest(401, "stale X-Signature-Timestamp (more than 5 minutes off: replay?)")
        signed = f"{stamp}.".encode() + body  # the header as sent (parsed: ASCII digits)
    given = fields.signature(headers.get(_SIGNATURE[rule.signature]), _SIGNATURE[rule.signature].title())
    if not fields.same(given, "sha256=" + hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()):
        raise RejectedRequest(401, "invalid webhook signature")
    payload = parse_json(body, "the delivery")
    digest = hashlib.sha256(signed).hexdigest()
    found = payload if isinstance(payload, dict) else {}
    given_id, given_kind = {  # Notion's id and type are the body's, signed
        "notion": (found.get("id"), found.get("type")),
        "github": (headers.get("x-github-delivery"), headers.get("x-github-event")),
    }.get(rule.signature, (headers.get("x-delivery-id"), "webhook"))
    delivery = fields.token(given_id, "the delivery id", _DELIVERY, status=400)
    kind = fields.token(given_kind, "the event name", _KIND, status=400)
    if rule.signature == "github":  # GitHub signs the body only, and a redelivery is the same body: its key
        return _Verified(delivery, kind, payload, f"sha256:{digest}", None)
    return _Verified(delivery, kind, payload, delivery, f"signed:{digest}" if rule.signature == "hmac" else None)


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
