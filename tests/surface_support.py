"""The webhook as a stranger reaches it, for the property tests of its public surface: the app over moto's SQS (FIFO)
and DynamoDB (the idempotency records), claim-checked bodies in a local store, and the one check every answer is
held to — a status the route documents, a short reason, no secret, nothing queued for a refusal, and every queued
message one SQS takes and the worker reads."""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
import urllib.parse
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_runtime.identity import KmsKeyring, Vault
from agent_runtime.identity.flow import ConnectFlow
from agent_runtime.ids import RUN_ID, check_thread_id
from agent_runtime.inbound import TriggerEvent
from agent_runtime.service.webhook import Webhook, create_app
from agent_runtime.stores import LocalStore
from agent_runtime.stores.items import ConnectAsk
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.idempotency import dynamodb_layer
from agent_runtime.triggers.queue import SqsQueue, decode
from agent_runtime.triggers.queued import DecisionMessage, EventMessage, FeedbackMessage, StopMessage, parse
from agent_runtime.workflows import load_workflow
from agent_runtime.workflows.triggers import JiraTrigger, SlackTrigger, TriggerSettings, WebhookTrigger
from hypothesis import strategies as st

from tests.conftest import create_state_table, make_workflow
from tests.oauth_support import provider_yaml
from tests.triggers_support import API_KEY, ENV, FakeContext, api_event, slack_request

HOOK_SECRET, PAGE_KEY, STATE_KEY = "hook-secret-FOR-TESTS-4f1c", "page-key-FOR-TESTS-01234567", "state-key-FOR-TESTS"
SECRETS = {**ENV, "HOOK_SECRET": HOOK_SECRET, "RUN_PAGE_KEY": PAGE_KEY}
CLIENT_SECRET = "client-secret-FOR-TESTS"  # the OAuth provider's
SECRET_VALUES = [v for k, v in SECRETS.items() if not k.endswith("_ID")] + [STATE_KEY, CLIENT_SECRET]  # ids: none
ANSWERS = frozenset({200, 202, 302, 400, 401, 403, 404, 405, 410, 413, 503})
SQS_GROUP = re.compile(r"[\x21-\x7e]{1,128}")  # what SQS takes as a MessageGroupId (moto does not check it)
LONGEST_REASON = 400
HEAD = "name: mine\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 128000}\n"

# JSON of every type, and text a sender may write where an id goes: other scripts, halves of characters, lengths.
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=24),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=6,
)
ODD = st.sampled_from(
    ["", " ", "C 1", "C0REVIEW\n", "é", "\ud800", "\u200b", "0" * 129, "C" * 300, "a/b", "../x", "%2F", "-", "1.2",
     "1763800000.000100", "U0DANA", "run-1|t-1", "|||", "T0TEAM", "x" * 10_000]
)  # fmt: skip
HOSTILE = st.one_of(JSON, ODD)


@dataclass(frozen=True)
class Sent:
    group: str
    dedup: str
    message: dict[str, Any]


@dataclass
class Surface:
    webhook: Webhook
    sqs: Any
    url: str
    store: LocalStore
    flow: ConnectFlow | None = None
    asks: list[str] = field(default_factory=list)

    def handle(self, event: dict[str, Any]) -> dict[str, Any]:
        """One request as Lambda hands it over; an exception here is what Lambda would answer with a 500."""
        return self.webhook.handle(event, FakeContext())

    def drain(self) -> list[Sent]:
        sent = []
        while True:
            got = self.sqs.receive_message(QueueUrl=self.url, MaxNumberOfMessages=10, AttributeNames=["All"])
            for message in got.get("Messages", []):
                found = message["Attributes"]
                body = decode(message["Body"], self.store)  # a claim check: the body the store keeps
                sent.append(Sent(found["MessageGroupId"], found["MessageDeduplicationId"], body))
                self.sqs.delete_message(QueueUrl=self.url, ReceiptHandle=message["ReceiptHandle"])
            if not got.get("Messages"):
                return sent

    def answered(self, event: dict[str, Any], *, drain: bool = True) -> tuple[dict[str, Any], list[Sent]]:
        """The request's answer and what it queued (``drain``: taken from the queue now), held to the surface's
        promise."""
        answer = self.handle(event)
        status, headers, body = answer["statusCode"], answer["headers"], answer["body"]
        assert status in ANSWERS, (status, body[:300])
        assert not any(s in body or s in json.dumps(headers) for s in SECRET_VALUES), body[:300]
        if headers["Content-Type"] == "application/json":
            said = json.loads(body)
            reason = said.get("error") if status >= 400 else said.get("reason", "")
            assert isinstance(reason, str) and (reason or status < 400) and len(reason) <= LONGEST_REASON, body[:300]
        sent = self.drain() if drain else []
        assert not sent or status < 300, (status, body[:300], sent)  # a refusal queues nothing
        for one in sent:
            taken(one)
        return answer, sent


def taken(sent: Sent) -> None:
    """What SQS takes (its group), and the worker reads: its message, its event's thread, its run's id."""
    assert SQS_GROUP.fullmatch(sent.group) and len(sent.dedup) <= 128, sent.group
    message = parse(sent.message)
    if isinstance(message, EventMessage):
        check_thread_id(message.event.thread_id)
    if isinstance(message, DecisionMessage | FeedbackMessage | StopMessage) and message.run_id:
        assert RUN_ID.fullmatch(message.run_id), message


def surface(
    moto: dict[str, Any], name: str, tmp: Path, *, connect: bool = False, workflows: list[Any] | None = None
) -> Surface:
    create_state_table(moto["dynamodb"], name)
    url = moto["sqs"].create_queue(QueueName=f"{name}.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    store = LocalStore(tmp / "state")
    flow = _flow(moto, store, tmp) if connect else None
    webhook = create_app(
        TriggerConfig.from_env(SECRETS),
        queue=SqsQueue(moto["sqs"], url, store=store),  # bodies over SQS's limit are claim-checked, as deployed
        persistence=dynamodb_layer(name, client=moto["dynamodb"]),
        workflows=WORKFLOWS if workflows is None else workflows,
        store=lambda: store,
        connect=(lambda: flow) if flow is not None else None,
    )
    return Surface(webhook, moto["sqs"], url, store, flow)


def _flow(moto: dict[str, Any], store: LocalStore, tmp: Path) -> ConnectFlow:
    (tmp / "mine.yaml").write_text(HEAD + provider_yaml("http://127.0.0.1:9"))
    key = moto["kms"].create_key()["KeyMetadata"]["KeyId"]
    secrets = {"oauth_state_key": STATE_KEY, "local_client_secret": CLIENT_SECRET}.get
    return ConnectFlow(store, Vault(store, KmsKeyring(moto["kms"], key)), workflow=lambda n: load_workflow(n, tmp),
                       secrets=secrets, base_url="https://stack.example")  # fmt: skip


def ask(flow: ConnectFlow) -> str:
    return flow.ask(ConnectAsk("slack:U0ANN", "local", "mine", "run-1", "thread-1", time.time() + 3600))[0]


def _hook(name: str, signature: str) -> Any:
    rule = WebhookTrigger(secret="hook_secret", signature=signature, message="$.title")
    return replace(make_workflow(), name=name, triggers=TriggerSettings(webhook=rule))


WORKFLOWS = [
    replace(
        make_workflow(),
        name="design-review",
        triggers=TriggerSettings(
            slack=SlackTrigger(channels=("*",), direct_messages=True, reactions=("eyes",)),
            jira=JiraTrigger(projects=("*",)),
        ),
    ),
    _hook("gh", "github"),
    _hook("hm", "hmac"),
]


def signed_slack(path: str, body: bytes, **extra: str) -> dict[str, Any]:
    return api_event(path, *slack_request(body, **extra))


def form(payload: Any) -> bytes:
    """An interactivity request's body, as Slack posts it: the payload's JSON in a form's ``payload`` field."""
    return b"payload=" + urllib.parse.quote(json.dumps(payload)).encode()


def signed_hmac(name: str, body: bytes, delivery: str, stamp: str | None = None) -> dict[str, Any]:
    stamp = stamp or str(int(time.time()))
    mac = hmac.new(HOOK_SECRET.encode(), stamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    headers = {"X-Signature-Timestamp": stamp, "X-Signature-256": f"sha256={mac}", "X-Delivery-Id": delivery}
    return api_event(f"/hooks/{name}", body, headers, base64_body=True)  # any bytes, as API Gateway passes them


def api_call(body: bytes) -> dict[str, Any]:
    return api_event("/runs", body, {"Authorization": f"Bearer {API_KEY}"})


def event_of(sent: Sent) -> TriggerEvent:
    return TriggerEvent.from_dict(sent.message["event"])
