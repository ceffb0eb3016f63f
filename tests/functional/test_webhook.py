"""Webhook routes on real signed requests: valid ones enqueue exactly once; forged, expired, replayed,
unsigned and malformed ones are refused with nothing enqueued. SQS and the idempotency table run on moto.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import boto3
import pytest
from agent_runtime.service.webhook import create_app
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.idempotency import dynamodb_layer
from agent_runtime.triggers.queue import SqsQueue, decode

from tests.conftest import create_state_table
from tests.triggers_support import (
    API_KEY,
    BOT_ACCOUNT,
    BOT_USER,
    ENV,
    JIRA_SHARED,
    FakeContext,
    api_event,
    jira_comment,
    jira_request,
    slack_mention,
    slack_request,
    workflows,
)


@pytest.fixture
def aws(moto_endpoint: str, request: pytest.FixtureRequest) -> Iterator[dict[str, Any]]:
    session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
    ddb, sqs = session.client("dynamodb", endpoint_url=moto_endpoint), session.client("sqs", endpoint_url=moto_endpoint)
    name = f"t{abs(hash(request.node.name)) % 10**8}"
    create_state_table(ddb, name)
    url = sqs.create_queue(
        QueueName=f"{name}.fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "false"}
    )["QueueUrl"]
    yield {"ddb": ddb, "sqs": sqs, "table": name, "url": url}


@pytest.fixture
def post(aws: dict[str, Any]) -> Callable[..., dict[str, Any]]:
    webhook = create_app(
        TriggerConfig.from_env(ENV),
        queue=SqsQueue(aws["sqs"], aws["url"]),
        persistence=dynamodb_layer(aws["table"], client=aws["ddb"]),
        workflows=workflows(),
    )
    context = FakeContext()

    def send(path: str, body: bytes, headers: dict[str, str], **kwargs: Any) -> dict[str, Any]:
        return webhook.handle(api_event(path, body, headers, **kwargs), context)

    return send


def queued(aws: dict[str, Any]) -> list[dict[str, Any]]:
    messages = []
    while True:
        got = aws["sqs"].receive_message(QueueUrl=aws["url"], MaxNumberOfMessages=10, WaitTimeSeconds=0)
        if "Messages" not in got:
            return messages
        for message in got["Messages"]:
            messages.append(decode(message["Body"], None))
            aws["sqs"].delete_message(QueueUrl=aws["url"], ReceiptHandle=message["ReceiptHandle"])


def body(response: dict[str, Any]) -> dict[str, Any]:
    return json.loads(response["body"])


def test_url_verification_answers_the_challenge(post) -> None:
    response = post("/slack/events", *slack_request({"type": "url_verification", "challenge": "3eZbrw1aB"}))
    assert (response["statusCode"], response["body"]) == (200, "3eZbrw1aB")


def test_a_mention_is_enqueued_once_and_its_retries_are_not(post, aws) -> None:
    first = post("/slack/events", *slack_request(slack_mention("Ev01")))
    retry = post("/slack/events", *slack_request(slack_mention("Ev01"), **{"X-Slack-Retry-Num": "1"}))
    assert (body(first), body(retry)) == (
        {"status": "queued", "workflow": "design-review"},
        {"status": "duplicate", "workflow": "design-review"},
    )
    [message] = queued(aws)
    event = message["event"]
    assert (message["type"], event["workflow"], event["text"]) == (
        "event",
        "design-review",
        "please review the attached design",
    )
    assert event["reply_to"] == {"channel": "C0REVIEW", "thread_ts": "1763800000.000100"}
    assert event["thread_id"] == "slack-T0TEAM-C0REVIEW-1763800000.000100"


def test_base64_bodies_from_api_gateway_verify(post, aws) -> None:
    response = post("/slack/events", *slack_request(slack_mention("Ev02")), base64_body=True)
    assert body(response)["status"] == "queued"
    assert len(queued(aws)) == 1


@pytest.mark.parametrize(
    ("make", "status", "reason"),
    [
        (
            lambda: slack_request(slack_mention(), secret="not-the-secret"),
            401,
            "forged Slack request: signature mismatch",
        ),
        (lambda: slack_request(slack_mention(), at=time.time() - 600), 401, "stale Slack request"),
        (lambda: (json.dumps(slack_mention()).encode(), {}), 401, "unsigned Slack request"),
        (lambda: slack_request({"type": "event_callback", "event": {"type": "app_mention"}}), 400, "without event_id"),
        (lambda: (b"{not json", slack_request({})[1]), 401, "forged Slack request"),
    ],
    ids=["forged", "expired", "unsigned", "malformed", "body-swapped"],
)
def test_bad_slack_requests_are_refused(post, aws, make, status: int, reason: str) -> None:
    response = post("/slack/events", *make())
    assert response["statusCode"] == status
    assert reason in body(response)["error"]
    assert queued(aws) == []


def test_malformed_signed_json_is_a_400(post, aws) -> None:
    response = post("/slack/events", *slack_request(b"{not json"))
    assert (response["statusCode"], body(response)) == (400, {"error": "Slack body is not JSON"})
    assert queued(aws) == []


@pytest.mark.parametrize(
    ("event", "reason"),
    [
        ({"bot_id": "B1"}, "the bot's own message"),
        ({"user": BOT_USER}, "the bot's own message"),
        (
            {"type": "message", "subtype": "message_changed", "channel_type": "channel"},
            "message subtype 'message_changed' (edits, deletions and joins start nothing)",
        ),
        (
            {"type": "message", "channel_type": "channel"},
            "channel message without a mention (mentions arrive as app_mention)",
        ),
        ({"channel": "C0OTHER"}, "no workflow's triggers match this event"),
    ],
    ids=["bot-id", "own-user", "edit", "plain-channel-message", "unrouted"],
)
def test_events_that_start_nothing_are_acknowledged_not_run(post, aws, event: dict, reason: str) -> None:
    response = post("/slack/events", *slack_request(slack_mention("Ev03", **event)))
    assert response["statusCode"] == 200
    assert body(response) == {"status": "ignored", "reason": reason}
    assert queued(aws) == []


def test_direct_messages_route_to_the_workflow_that_takes_them(post, aws) -> None:
    dm = slack_mention("Ev04", type="message", channel="D0DANA", channel_type="im", text="hello")
    assert body(post("/slack/events", *slack_request(dm)))["status"] == "queued"
    [message] = queued(aws)
    assert message["event"]["kind"] == "message" and message["event"]["attributes"]["direct_message"] is True


def test_a_jira_comment_and_its_issue_updated_duplicate_enqueue_once(post, aws) -> None:
    comment = jira_comment("10042")
    duplicate = {**comment, "webhookEvent": "jira:issue_updated", "issue_event_type_name": "issue_commented"}
    assert body(post("/jira/webhook", *jira_request(comment)))["status"] == "queued"
    assert body(post("/jira/webhook", *jira_request(duplicate)))["status"] == "duplicate"
    assert body(post("/jira/webhook", *jira_request(comment)))["status"] == "duplicate"  # a JIRA retry
    [message] = queued(aws)
    assert message["event"]["text"] == "@agent is this design ready?\n"
    assert message["event"]["reply_to"] == {"issue_key": "PROJ-1423"}


def test_automation_requests_use_the_shared_secret_header(post, aws) -> None:
    raw = json.dumps(jira_comment("10050")).encode()
    assert body(post("/jira/webhook", raw, {"X-Webhook-Secret": JIRA_SHARED}))["status"] == "queued"
    assert post("/jira/webhook", raw, {"X-Webhook-Secret": "guess"})["statusCode"] == 401
    assert len(queued(aws)) == 1


@pytest.mark.parametrize(
    ("make", "status", "reason"),
    [
        (lambda: jira_request(jira_comment(), secret="wrong"), 401, "X-Hub-Signature mismatch"),
        (lambda: (json.dumps(jira_comment()).encode(), {}), 401, "unsigned JIRA request"),
        (lambda: jira_request({**jira_comment(), "timestamp": int((time.time() - 3 * 3600) * 1000)}), 401, "stale"),
        (lambda: jira_request({"webhookEvent": "comment_created"}), 400, "without an issue"),
    ],
    ids=["forged", "unsigned", "replayed", "malformed"],
)
def test_bad_jira_requests_are_refused(post, aws, make, status: int, reason: str) -> None:
    response = post("/jira/webhook", *make())
    assert response["statusCode"] == status and reason in body(response)["error"]
    assert queued(aws) == []


def test_the_bots_own_comments_and_other_projects_start_nothing(post, aws) -> None:
    own = post("/jira/webhook", *jira_request(jira_comment("1", author=BOT_ACCOUNT)))
    other = post("/jira/webhook", *jira_request(jira_comment("2", project="OPS")))
    assert body(own) == {"status": "ignored", "reason": "the bot's own comment"}
    assert body(other)["reason"] == "no workflow's triggers match this event"
    assert queued(aws) == []


def test_runs_by_api_need_the_key_and_a_known_workflow(post, aws) -> None:
    good = json.dumps({"workflow": "chat", "message": "hi", "request_id": "r-1"}).encode()
    assert post("/runs", good, {"Authorization": f"Bearer {API_KEY}"})["statusCode"] == 200
    assert post("/runs", good, {"Authorization": f"Bearer {API_KEY}"}).get("body") == json.dumps(
        {"status": "duplicate", "workflow": "chat"}
    )
    assert post("/runs", good, {"Authorization": "Bearer nope"})["statusCode"] == 401
    unknown = json.dumps({"workflow": "nope", "message": "hi"}).encode()
    assert body(post("/runs", unknown, {"Authorization": f"Bearer {API_KEY}"})) == {"error": "unknown workflow 'nope'"}
    [message] = queued(aws)
    assert (message["event"]["source"], message["event"]["thread_id"]) == ("api", "api-r-1")


def test_the_envelope_fixture_is_what_sam_generates() -> None:
    """tests/events/http-api-proxy.json is `sam local generate-event apigateway http-api-proxy`, verbatim."""
    import os
    import subprocess

    from tests.conftest import REPO
    from tests.triggers_support import EVENTS

    sam = REPO / ".venv-sam" / "bin" / "sam"
    if not sam.exists():
        assert not os.environ.get("AGENT_REQUIRE_BUILD"), "make test installs the SAM CLI (make validate)"
        pytest.skip("no SAM CLI in .venv-sam (run `make validate`)")
    out = subprocess.run(
        [str(sam), "local", "generate-event", "apigateway", "http-api-proxy"],
        env={**os.environ, "SAM_CLI_TELEMETRY": "0"},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(out.stdout) == json.loads((EVENTS / "http-api-proxy.json").read_text())


def test_secrets_come_from_secrets_manager_through_powertools_parameters(
    moto_endpoint: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in {"AWS_ENDPOINT_URL": moto_endpoint, "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "t")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "t")
    client = boto3.client("secretsmanager")
    client.create_secret(Name="agent-runtime/test", SecretString=json.dumps({"slack_signing_secret": "from-sm"}))
    config = TriggerConfig.from_env({"AGENT_SECRETS_NAME": "agent-runtime/test", "SLACK_SIGNING_SECRET": "env"})
    assert config.secret("slack_signing_secret") == "from-sm"  # the secret wins over the environment
    assert config.secret("jira_api_token") is None


def _nested(levels: int) -> bytes:
    return b'{"a":' * levels + b"1" + b"}" * levels


@pytest.mark.parametrize("levels", [100, 100_000])
def test_signed_bodies_nested_deeply_are_a_400_on_every_route(post, aws, levels: int) -> None:
    """Was: no HTTP response at all (RecursionError, which 'except ValueError' missed)."""
    raw = _nested(levels)
    for path, (data, headers) in (("/slack/events", slack_request(raw)), ("/jira/webhook", jira_request(raw))):
        response = post(path, data, headers)
        assert response["statusCode"] == 400 and "nested too deeply" in body(response)["error"]
    response = post("/runs", raw, {"Authorization": f"Bearer {API_KEY}"})
    assert response["statusCode"] == 400 and "nested too deeply" in body(response)["error"]
    assert queued(aws) == []


@pytest.mark.parametrize(
    ("stamp", "status", "reason"),
    [
        (str(int((time.time() - 3 * 3600) * 1000)), 401, "stale"),  # a string skipped the check
        ((time.time() - 3 * 3600) * 1000.0, 401, "stale"),  # so did a float
        (int((time.time() + 3600) * 1000), 401, "from the future"),
        ("soon", 400, "timestamp is not a number"),
        (True, 400, "timestamp is not a number"),
    ],
    ids=["stale-string", "stale-float", "future-int", "word", "bool"],  # the same names in every worker
)
def test_jira_timestamps_of_any_type_are_checked(post, aws, stamp: Any, status: int, reason: str) -> None:
    response = post("/jira/webhook", *jira_request({**jira_comment(), "timestamp": stamp}))
    assert response["statusCode"] == status and reason in body(response)["error"]
    assert queued(aws) == []


def test_adf_is_walked_without_recursion() -> None:
    from agent_runtime.adf import adf_text

    node: dict[str, Any] = {"type": "text", "text": "deep"}
    for _ in range(5_000):
        node = {"type": "paragraph", "content": [node]}
    assert adf_text(node) == "deep" + "\n" * 5_000
    text, brk = {"type": "text", "text": "a"}, {"type": "hardBreak"}
    mention = {"type": "mention", "attrs": {"text": "@Dana"}}
    heading = {"type": "heading", "content": [{"type": "text", "text": "H"}]}
    doc = {"type": "doc", "content": [{"type": "paragraph", "content": [text, brk, mention]}, heading]}
    assert adf_text(doc) == "a\n@Dana\nH\n"
