"""Shared pieces for trigger tests: API Gateway envelopes, signed Slack/JIRA requests, fake Slack and JIRA APIs."""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import json
import threading
import time
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from agent_runtime.workflows.triggers import JiraTrigger, SlackTrigger, TriggerSettings
from slack_sdk.signature import SignatureVerifier

from tests.conftest import make_workflow

EVENTS = Path(__file__).resolve().parent / "events"
SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
JIRA_SECRET = "jira-admin-webhook-secret"
JIRA_SHARED = "automation-shared-secret"
API_KEY = "api-key-for-tests"
BOT_USER = "U0BOT"
BOT_ACCOUNT = "5b10ac8d82e05b22cc7d4ef5"
# What a handler's init needs to run outside Lambda (no call is made: clients are made, not used)
HANDLER_ENV = {
    "AGENT_TABLE": "t",
    "AGENT_BUCKET": "b",
    "AGENT_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "x",
    "AWS_SECRET_ACCESS_KEY": "y",
    "AGENT_SANDBOX": "off",
}
# What the webhook's trigger config reads: the secrets and ids the signed requests here are made with
ENV = {
    "SLACK_SIGNING_SECRET": SLACK_SECRET,
    "SLACK_BOT_USER_ID": BOT_USER,
    "JIRA_WEBHOOK_SECRET": JIRA_SECRET,
    "JIRA_SHARED_SECRET": JIRA_SHARED,
    "JIRA_BOT_ACCOUNT_ID": BOT_ACCOUNT,
    "API_KEY": API_KEY,
}


def api_event(path: str, body: bytes, headers: dict[str, str], *, base64_body: bool = False) -> dict[str, Any]:
    """An API Gateway HTTP API (payload 2.0) event, from the envelope `sam local generate-event` produces."""
    event = copy.deepcopy(json.loads((EVENTS / "http-api-proxy.json").read_text()))
    event["rawPath"] = event["requestContext"]["http"]["path"] = path
    event["routeKey"] = event["requestContext"]["routeKey"] = f"POST {path}"
    event["requestContext"]["http"]["method"] = "POST"
    event["headers"] = {"content-type": "application/json", **{k.lower(): v for k, v in headers.items()}}
    event["body"] = base64.b64encode(body).decode() if base64_body else body.decode()
    event["isBase64Encoded"] = base64_body
    return event


def api_get(url: str) -> dict[str, Any]:
    """A GET of ``url`` (a path and its query, or a whole link) as API Gateway's HTTP API hands it over."""
    parts = urllib.parse.urlsplit(url)
    event = api_event(parts.path, b"", {})
    event["routeKey"] = event["requestContext"]["routeKey"] = f"GET {parts.path}"
    event["requestContext"]["http"]["method"] = "GET"
    event["rawQueryString"] = parts.query
    event["queryStringParameters"] = dict(urllib.parse.parse_qsl(parts.query)) or None
    event["body"] = None
    return event


def slack_request(
    payload: dict[str, Any] | bytes, *, secret: str = SLACK_SECRET, at: float | None = None, **extra: str
):
    """A signed Slack request: ``payload`` as JSON, or raw bytes sent as they are."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    timestamp = str(int(at if at is not None else time.time()))
    signature = SignatureVerifier(secret).generate_signature(timestamp=timestamp, body=body)
    headers = {"X-Slack-Request-Timestamp": timestamp, "X-Slack-Signature": signature, **extra}
    return body, headers


def jira_request(payload: dict[str, Any] | bytes, *, secret: str = JIRA_SECRET) -> tuple[bytes, dict[str, str]]:
    """A signed JIRA admin-webhook request: ``payload`` as JSON, or raw bytes sent as they are."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    digest = hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return body, {"X-Hub-Signature": f"sha256={digest}", "X-Atlassian-Webhook-Identifier": "wh-1"}


def slack_mention(event_id: str = "Ev01", *, channel: str = "C0REVIEW", ts: str = "1763800000.000100", **event: Any):
    inner = {
        "type": "app_mention",
        "user": "U0DANA",
        "text": f"<@{BOT_USER}> please review the attached design",
        "ts": ts,
        "channel": channel,
        "event_ts": ts,
        **event,
    }
    return {
        "token": "unused",
        "team_id": "T0TEAM",
        "api_app_id": "A0APP",
        "event": inner,
        "type": "event_callback",
        "event_id": event_id,
        "event_time": 1763800000,
        "authorizations": [{"user_id": BOT_USER, "is_bot": True}],
    }


def jira_comment(comment_id: str = "10042", *, project: str = "PROJ", author: str = "5b10a2844c20165700ede21g"):
    return {
        "timestamp": int(time.time() * 1000),
        "webhookEvent": "comment_created",
        "comment": {
            "id": comment_id,
            "author": {"accountId": author, "displayName": "Dana Lee"},
            "body": {
                "type": "doc",
                "version": 1,
                "content": [
                    {"type": "paragraph", "content": [{"type": "text", "text": "@agent is this design ready?"}]}
                ],
            },
        },
        "issue": {
            "id": "10001",
            "key": f"{project}-1423",
            "fields": {
                "summary": "Review the webhook retries design",
                "project": {"key": project},
                "issuetype": {"name": "Story"},
                "labels": ["design-review"],
                "attachment": [],
            },
        },
    }


class FakeContext:
    """What Lambda passes as the context (name, request id, remaining time)."""

    function_name = "agent-runtime-test"
    memory_limit_in_mb = 1024
    invoked_function_arn = "arn:aws:lambda:us-east-1:123456789012:function:agent-runtime-test"
    aws_request_id = "req-1"

    def __init__(self, seconds: float = 900) -> None:
        self._until = time.monotonic() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return int((self._until - time.monotonic()) * 1000)


class FakeApis:
    """Slack's Web API and JIRA's REST API on 127.0.0.1 (real HTTP), recording what the worker sent."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.files: dict[str, bytes] = {}  # served to downloads, by path
        self.refuse: dict[str, str] = {}  # Slack method -> the error it answers with
        # Slack's answer streams (chat.startStream ...): off unless a test turns them on, as in a workspace
        # whose token may not stream (the error Slack gives then), so answers take the plain post/update path.
        self.streams = False
        self.uploads: dict[str, bytes] = {}  # received: Slack upload URLs' bodies by file id, JIRA's by path
        self.threads: dict[str, list[dict[str, Any]]] = {}  # conversations.replies: messages by thread ts
        self.jira: dict[str, Any] = {}  # JIRA REST resources (GET) by path without the query
        self.private: set[str] = set()  # channels conversations.info describes as private (others: public)
        self.usergroups: dict[str, list[str]] = {}  # usergroups.users.list: a user group's members (else: no_such)
        self.lock = threading.Lock()
        self._ts = 0

    def next_ts(self) -> str:
        with self.lock:
            self._ts += 1
            return f"1763800100.{self._ts:06d}"

    def record(self, name: str, body: dict[str, Any]) -> None:
        with self.lock:
            self.calls.append((name, body))

    def named(self, name: str) -> list[dict[str, Any]]:
        return [body for call, body in self.calls if call == name]


class _FakeApiHandler(BaseHTTPRequestHandler):
    """Serves the FakeApis set on its server (``server.apis``)."""

    @property
    def apis(self) -> FakeApis:
        return self.server.apis  # type: ignore[attr-defined]

    def _send(self, status: int, body: bytes, kind: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _jira_get(self, jira: str) -> bool:
        path, _, query = self.path.partition("?")
        if path not in self.apis.jira or self.headers.get("Authorization") != jira:
            return False
        from urllib.parse import parse_qs

        self.apis.record("jira.get", {"path": path, **{k: v[0] for k, v in parse_qs(query).items()}})
        self._send(200, json.dumps(self.apis.jira[path]).encode())
        return True

    def do_GET(self) -> None:
        data = self.apis.files.get(self.path)
        jira = "Basic " + base64.b64encode(b"bot@example.com:jira-token").decode()
        if self._jira_get(jira):
            return None
        if data is None or self.headers.get("Authorization") not in ("Bearer xoxb-test", jira):
            return self._send(404, b"not found", "text/plain")
        self._send(200, data, "application/octet-stream")

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        kind = self.headers.get("Content-Type", "")
        if self.path.startswith("/upload/"):  # the URL files.getUploadURLExternal handed out
            self.apis.uploads[self.path.rsplit("/", 1)[-1]] = raw
            return self._send(200, f"OK - {len(raw)}".encode(), "text/plain")
        if self.path.endswith("/attachments"):
            self.apis.record("jira.attach", {"path": self.path, "token": self.headers.get("X-Atlassian-Token")})
            self.apis.uploads[self.path] = raw
            return self._send(200, b"[]")
        if self.path.startswith("/rest/api/3/issue/"):
            body = json.loads(raw)
            self.apis.record("jira.comment", {"path": self.path, **body})
            return self._send(201, json.dumps({"id": str(len(self.apis.named("jira.comment")))}).encode())
        from urllib.parse import parse_qsl

        body = json.loads(raw) if "json" in kind else dict(parse_qsl(raw.decode(), keep_blank_values=True))
        method = self.path.rsplit("/", 1)[-1]
        self.apis.record(method, body)
        if method in self.apis.refuse:
            return self._send(200, json.dumps({"ok": False, "error": self.apis.refuse[method]}).encode())
        if method == "files.getUploadURLExternal":
            file_id = f"F{len(self.apis.named(method))}"
            host = f"http://127.0.0.1:{self.server.server_address[1]}"
            return self._send(
                200, json.dumps({"ok": True, "upload_url": f"{host}/upload/{file_id}", "file_id": file_id}).encode()
            )
        if method == "conversations.replies":  # paged as Slack pages it: limit, and an opaque next_cursor
            messages = self.apis.threads.get(body.get("ts", ""), [])
            start, limit = int(body.get("cursor") or 0), int(body.get("limit") or 1000)
            page, more = messages[start : start + limit], start + limit < len(messages)
            meta = {"next_cursor": str(start + limit) if more else ""}
            answer = {"ok": True, "messages": page, "has_more": more, "response_metadata": meta}
            return self._send(200, json.dumps(answer).encode())
        if method == "reactions.get":  # the message a reaction marks, from the threads the test set
            found = [m for thread in self.apis.threads.values() for m in thread if m.get("ts") == body.get("timestamp")]
            missing = {"ok": False, "error": "message_not_found"}
            answer = {"ok": True, "type": "message", "message": found[0]} if found else missing
            return self._send(200, json.dumps(answer).encode())
        described = self._described(method, body)
        if described is not None:
            return self._send(200, json.dumps(described).encode())
        if method == "files.completeUploadExternal":
            return self._send(200, json.dumps({"ok": True, "files": json.loads(body["files"])}).encode())
        if method == "chat.startStream" and not self.apis.streams:
            return self._send(200, json.dumps({"ok": False, "error": "not_allowed_token_type"}).encode())
        if method in ("chat.startStream", "chat.appendStream") and _too_long(body.get("chunks")):
            return self._send(200, json.dumps({"ok": False, "error": "msg_too_long"}).encode())
        ts = self.apis.next_ts() if method in ("chat.postMessage", "chat.startStream") else body.get("ts")
        self._send(200, json.dumps({"ok": True, "ts": ts, "channel": body.get("channel")}).encode())

    def _described(self, method: str, body: dict[str, Any]) -> dict[str, Any] | None:
        """What Slack says of a channel (public unless the test made it private) and of a user group (its members,
        or an error for one it does not know)."""
        if method == "conversations.info":
            channel = str(body.get("channel"))
            return {
                "ok": True,
                "channel": {"id": channel, "is_channel": True, "is_private": channel in self.apis.private},
            }
        if method == "usergroups.users.list":
            members = self.apis.usergroups.get(str(body.get("usergroup")))
            return {"ok": True, "users": members} if members is not None else {"ok": False, "error": "no_such_subteam"}
        return None

    def log_message(self, *args: object) -> None:
        pass


def _too_long(chunks: Any) -> bool:
    """Slack's limit on one markdown_text chunk: 12,000 characters."""
    parsed = json.loads(chunks) if isinstance(chunks, str) else chunks or []
    return any(len(str(chunk.get("text") or "")) > 12_000 for chunk in parsed if isinstance(chunk, dict))


@contextmanager
def fake_apis(port: int = 0, apis: FakeApis | None = None) -> Iterator[tuple[FakeApis, str]]:
    """``port``: where (a Slack that comes back where it was out of reach); ``apis``: an earlier server's log."""
    apis = apis if apis is not None else FakeApis()
    server = ThreadingHTTPServer(("127.0.0.1", port), _FakeApiHandler)
    server.apis = apis  # type: ignore[attr-defined]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield apis, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def sqs_lambda_event(messages: list[dict[str, Any]], queue_arn: str = "arn:aws:sqs:us-east-1:123456789012:q.fifo"):
    """The event Lambda's SQS event source mapping delivers, built from received messages."""
    return {
        "Records": [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": {
                    "ApproximateReceiveCount": m.get("Attributes", {}).get("ApproximateReceiveCount", "1"),
                    "SentTimestamp": "1763800000000",
                    "SenderId": "AIDAIENQZJOLO23YVJ4VO",
                    "ApproximateFirstReceiveTimestamp": "1763800000001",
                    "MessageGroupId": m.get("Attributes", {}).get("MessageGroupId", "g"),
                    "MessageDeduplicationId": m.get("Attributes", {}).get("MessageDeduplicationId", "d"),
                    "SequenceNumber": "1",
                },
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": queue_arn,
                "awsRegion": "us-east-1",
            }
            for m in messages
        ]
    }


def workflows() -> list:
    review = replace(
        make_workflow(),
        name="design-review",
        triggers=TriggerSettings(
            slack=SlackTrigger(channels=("C0REVIEW",), direct_messages=True),
            jira=JiraTrigger(projects=("PROJ",), labels=("design-review",)),
        ),
    )
    return [review, replace(make_workflow(), name="chat")]


# A workflow only the support group may start (U0SAM): the access refusals' tests
GUARDED = """\
name: guarded
description: d
prompt: p
model: {name: gpt-4o, context_window: 128000}
triggers:
  slack: {channels: [C0GUARD]}
access:
  groups:
    support: {slack_users: [U0SAM]}
  start: [support]
"""
