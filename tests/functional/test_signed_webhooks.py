"""Signed webhooks (``triggers.webhook``): a GitHub delivery through the webhook's HTTP path, SQS (moto) and the
worker — verified by its own X-Hub-Signature-256, run once per delivery id, its body the run's delivery.json and
its pull request's title the message; forged, stale, oversized, unknown and ping deliveries start nothing."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

from agent_runtime.stores import RunStore
from agent_runtime.testing import reply

SECRET = "gh-webhook-secret-for-tests"
FLOW = """\
name: pr-review
description: Reviews a pull request when GitHub says one opened.
prompt: You review pull requests.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  webhook: {secret: github_webhook_secret, signature: github, events: [pull_request], message: $.pull_request.title}
"""
DELIVERY = {"action": "opened", "number": 7, "pull_request": {"title": "Retry webhooks with backoff", "number": 7},
            "sender": {"login": "octocat"}}  # fmt: skip


def github(body: bytes, *, delivery: str = "d-1", event: str = "pull_request", secret: str = SECRET) -> dict[str, str]:
    signature = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
    return {"X-Hub-Signature-256": signature, "X-GitHub-Delivery": delivery, "X-GitHub-Event": event}


def test_a_github_delivery_runs_once_and_forgeries_start_nothing(system, scripted, tmp_path: Path) -> None:
    (tmp_path / "pr-review.yaml").write_text(FLOW)
    server = scripted(reply("Looks good: the backoff is bounded."))
    s = system(server, secrets={"GITHUB_WEBHOOK_SECRET": SECRET})
    body = json.dumps(DELIVERY).encode()
    accepted = s.post("/hooks/pr-review", body, github(body))
    assert accepted["statusCode"] == 200 and json.loads(accepted["body"])["status"] == "queued"
    assert s.post("/hooks/pr-review", body, github(body))["statusCode"] == 200  # GitHub redelivers: deduplicated
    assert s.deliver() == ["answered"]  # once; no chat to answer in: the run record is the answer
    [request] = server.requests
    assert request.last_user_text().startswith("Retry webhooks with backoff")
    [summary] = RunStore(s.store).list_runs(limit=5)
    record = RunStore(s.store).load_record(summary.run_id) or {}
    assert record["status"] == "completed" and record["final_answer"].startswith("Looks good")
    assert [f["name"] for f in record["files"]] == ["delivery.json"]

    def status(path: str, payload: bytes, headers: dict[str, str]) -> int:
        return int(s.post(path, payload, headers)["statusCode"])

    assert status("/hooks/pr-review", body, github(body, delivery="d-2", secret="forged")) == 401
    assert status("/hooks/pr-review", body, {"X-GitHub-Delivery": "d-3", "X-GitHub-Event": "pull_request"}) == 401
    tampered = body.replace(b"Retry", b"Delete")
    assert status("/hooks/pr-review", tampered, github(body, delivery="d-4")) == 401
    assert status("/hooks/no-such-flow", body, github(body, delivery="d-5")) == 404
    assert status("/hooks/pr-review", b"x" * 2_000_000, github(b"x" * 2_000_000, delivery="d-6")) == 413
    ping = s.post("/hooks/pr-review", body, github(body, delivery="d-7", event="ping"))
    assert ping["statusCode"] == 200 and json.loads(ping["body"])["status"] == "ignored"
    assert s.deliver() == [] and len(server.requests) == 1  # none of them reached the worker


def test_an_hmac_sender_signs_the_timestamp_too_and_a_stale_one_is_refused(system, scripted, tmp_path: Path) -> None:
    (tmp_path / "pr-review.yaml").write_text(
        FLOW.replace("signature: github, events: [pull_request], ", "signature: hmac, ")
    )
    server = scripted(reply("Noted."))
    s = system(server, secrets={"GITHUB_WEBHOOK_SECRET": SECRET})
    body = json.dumps(DELIVERY).encode()

    def signed(at: float, delivery: str) -> dict[str, Any]:
        stamp = str(int(at))
        digest = hmac.new(SECRET.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
        headers = {"X-Signature-256": f"sha256={digest}", "X-Signature-Timestamp": stamp, "X-Delivery-Id": delivery}
        return s.post("/hooks/pr-review", body, headers)

    assert signed(time.time() - 3_600, "z-1")["statusCode"] == 401  # an hour old: a replay
    assert signed(time.time(), "z-2")["statusCode"] == 200
    s.deliver()
    assert len(server.requests) == 1


NOTION_FLOW = """\
name: page-review
description: Reviews a Notion page when its properties change.
prompt: You review Notion pages.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  webhook: {secret: notion_webhook_token, signature: notion, events: [page.properties_updated]}
"""
NOTION_TOKEN = "secret_tMrlL1qK5vuQAh1b6cZGhFChZTSYJlce98V0pYn7yBl"
NOTION_EVENT = {"id": "367cba44-b6f3-4c92-81e7-6a2e9659efd4", "timestamp": "2026-11-26T12:00:00.000Z",
                "workspace_id": "13950b26-c203-4f3b-b97d-93ec06319565", "subscription_id": "sub-1",
                "integration_id": "int-1", "type": "page.properties_updated", "attempt_number": 1,
                "authors": [{"id": "c7c11cca-1d73-471d-9b6e-bdef51470190", "type": "person"}],
                "entity": {"id": "153104cd-477e-809d-8dc4-ff2d96ae3090", "type": "page"},
                "data": {"updated_properties": ["Status"]}}  # fmt: skip


def notion(body: bytes, token: str = NOTION_TOKEN) -> dict[str, str]:
    return {"X-Notion-Signature": "sha256=" + hmac.new(token.encode(), body, hashlib.sha256).hexdigest()}


def test_notions_handshake_is_kept_for_the_admin_and_its_token_then_verifies_events(
    system,
    scripted,
    tmp_path: Path,
) -> None:
    """Notion posts its verification token once, unsigned: it is kept (never trusted by itself) for the admin to
    paste back; with the token in the integrations secret, a signed event runs once, however often it comes."""
    from agent_runtime.triggers.handshakes import Handshakes

    (tmp_path / "page-review.yaml").write_text(NOTION_FLOW)
    server = scripted(reply("The page's status changed to Ready: reviewed."))
    before = system(server)  # the admin has not put the token in the secret yet
    handshake = json.dumps({"verification_token": NOTION_TOKEN}).encode()
    kept = before.post("/hooks/page-review", handshake, {"Content-Type": "application/json"})
    assert kept["statusCode"] == 200 and "webhook-token page-review" in json.loads(kept["body"])["reason"]
    assert [t["token"] for t in Handshakes(before.store).tokens("page-review")] == [NOTION_TOKEN]
    forged = json.dumps({"verification_token": "secret_" + "f" * 43}).encode()
    before.post("/hooks/page-review", forged, {})  # anyone can post one: kept beside it, newest first, trusted by none
    assert [t["token"] for t in Handshakes(before.store).tokens("page-review")][1] == NOTION_TOKEN
    body = json.dumps(NOTION_EVENT).encode()
    assert before.post("/hooks/page-review", body, notion(body))["statusCode"] == 401  # the secret is not set
    assert before.post("/hooks/page-review", body, notion(body, "secret_" + "f" * 43))["statusCode"] == 401
    for bad in (json.dumps({"verification_token": NOTION_TOKEN, "type": "page.created"}).encode(), body, b"[]"):
        assert before.post("/hooks/page-review", bad, {})["statusCode"] in (400, 401)  # unsigned and not a handshake
    assert before.deliver() == [] and not server.requests

    s = system(server, secrets={"NOTION_WEBHOOK_TOKEN": NOTION_TOKEN})
    assert json.loads(s.post("/hooks/page-review", body, notion(body))["body"])["status"] == "queued"
    again = json.dumps({**NOTION_EVENT, "attempt_number": 2}).encode()  # Notion retries with the same id
    assert json.loads(s.post("/hooks/page-review", again, notion(again))["body"])["status"] == "duplicate"
    assert s.post("/hooks/page-review", body, notion(body, "secret_" + "f" * 43))["statusCode"] == 401
    other = json.dumps({**NOTION_EVENT, "id": "other-1", "type": "comment.created"}).encode()
    assert json.loads(s.post("/hooks/page-review", other, notion(other))["body"])["status"] == "ignored"
    assert s.deliver() == ["answered"]
    [request] = server.requests
    assert "page.properties_updated" in request.last_user_text()
    [summary] = RunStore(s.store).list_runs(limit=5)
    record = RunStore(s.store).load_record(summary.run_id) or {}
    assert record["status"] == "completed" and [f["name"] for f in record["files"]] == ["delivery.json"]


def test_a_captured_delivery_replayed_with_new_ids_is_one_run(system, scripted, tmp_path: Path) -> None:
    """Issue 51, class 6: the delivery-id headers are not signed. A GitHub delivery replayed under ten new ids
    (GitHub signs the body alone) and an ``hmac`` one replayed within its 5 minutes under new ids are each one
    run; an ``hmac`` sender's retry signed anew under the same id is the same run; another body is another run."""
    (tmp_path / "pr-review.yaml").write_text(FLOW)
    (tmp_path / "any-sender.yaml").write_text(
        FLOW.replace("pr-review", "any-sender").replace(
            "signature: github, events: [pull_request], ", "signature: hmac, "
        )
    )
    server = scripted(reply("First."), reply("Second."), reply("Third."))
    s = system(server, secrets={"GITHUB_WEBHOOK_SECRET": SECRET})
    body = json.dumps(DELIVERY).encode()

    def status(path: str, payload: bytes, headers: dict[str, str]) -> str:
        answer = s.post(path, payload, headers)
        assert answer["statusCode"] == 200, answer["body"]
        return str(json.loads(answer["body"])["status"])

    github_statuses = [status("/hooks/pr-review", body, github(body, delivery=f"replay-{n}")) for n in range(10)]
    assert github_statuses == ["queued"] + ["duplicate"] * 9

    def signed(at: int, delivery: str, payload: bytes = body) -> dict[str, str]:
        digest = hmac.new(SECRET.encode(), f"{at}.".encode() + payload, hashlib.sha256).hexdigest()
        return {"X-Signature-256": f"sha256={digest}", "X-Signature-Timestamp": str(at), "X-Delivery-Id": delivery}

    at = int(time.time())
    hmac_statuses = [status("/hooks/any-sender", body, signed(at, f"z-{n}")) for n in range(5)]
    assert hmac_statuses == ["queued"] + ["duplicate"] * 4  # the same signed timestamp and body: a replay
    assert status("/hooks/any-sender", body, signed(at + 30, "z-0")) == "duplicate"  # a retry, signed anew
    other = json.dumps({**DELIVERY, "number": 8}).encode()
    assert status("/hooks/any-sender", other, signed(at, "z-9", other)) == "queued"  # another delivery
    assert sorted(s.deliver()) == ["answered"] * 3
    assert len(server.requests) == 3


def test_a_missing_webhook_secret_is_named_where_serve_reads_it(system, scripted, tmp_path: Path) -> None:
    """Issue 50: the refusal named the integrations secret's key; locally (``serve``) the environment variable is
    what is read."""
    (tmp_path / "pr-review.yaml").write_text(FLOW)
    s = system(scripted())
    body = json.dumps(DELIVERY).encode()
    refused = s.post("/hooks/pr-review", body, github(body))
    assert refused["statusCode"] == 401
    reason = json.loads(refused["body"])["error"]
    assert "GITHUB_WEBHOOK_SECRET in the environment" in reason and "github_webhook_secret" in reason
