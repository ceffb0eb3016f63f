"""The webhook's public surface, as anyone on the internet reaches it (the app over moto's SQS and DynamoDB): any
method, path (percent-encoded, odd characters, a named stage), headers (missing, duplicated as API Gateway joins
them, in any case), query (a field given twice), body (base64 or not, not UTF-8, huge) gets a status its route
documents with a short reason and no secret, and queues nothing without a signature or key. A valid request keeps
its answer whatever the case of its headers or the encoding of its body, and its retries queue it once."""

from __future__ import annotations

import base64
import itertools
import json
import urllib.parse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.service.webhook import create_app
from agent_runtime.stores import LocalStore
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.idempotency import StorePersistenceLayer
from agent_runtime.triggers.queue import LocalQueue
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import moto_clients
from tests.surface_support import ODD, Surface, ask, event_of, signed_slack, surface
from tests.triggers_support import ENV, FakeContext, api_event, api_get, slack_mention, workflows

ROUTES = ["/slack/events", "/slack/interactivity", "/jira/webhook", "/runs", "/hooks/{}", "/runs/{}/stop",
          "/runs/{}/page", "/oauth/{}/start", "/oauth/{}/callback"]  # fmt: skip
NAMES = ["x-slack-signature", "X-Slack-Request-Timestamp", "authorization", "X-HUB-SIGNATURE", "x-webhook-secret",
         "X-Signature-256", "x-signature-timestamp", "X-Delivery-Id", "x-github-event", "X-Notion-Signature",
         "content-type", "X-Slack-Retry-Num"]  # fmt: skip
OAUTH = ["start", "callback"]
QUERY = ["expires", "private", "signature", "ask", "state", "code", "error"]
TEXT = st.one_of(ODD, st.text(max_size=40), st.from_regex(r"(v0|sha256)=[0-9a-f]{64}", fullmatch=True))
SEGMENT = st.one_of(ODD, st.text(max_size=30), st.sampled_from(["gh", "hm", "local", "run-0123", "%2e%2e", "a%00b"]))
FAST = settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))


@pytest.fixture
def app(moto_endpoint: str, tmp_path: Path, request: pytest.FixtureRequest) -> Surface:
    clients = moto_clients(moto_endpoint, "dynamodb", "sqs", "kms")
    return surface(clients, f"s{abs(hash(request.node.name)) % 10**8}", tmp_path, connect=True)


def quote(segment: str, safe: str = "") -> str:
    return urllib.parse.quote(segment, safe=safe, errors="surrogatepass")


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    """An API Gateway HTTP API event with every part a stranger controls drawn (most often on a route, by its
    method: the rest is the router's own 404 and 405)."""
    route = draw(st.sampled_from(ROUTES))
    path = route.format(quote(draw(SEGMENT), draw(st.sampled_from(["", "/%"]))))
    odd = [path + "/", "/prod" + path, path.upper(), draw(st.text(max_size=20))]
    path = draw(st.sampled_from([path] * 6 + odd))
    usual = "GET" if route.endswith(("page", "start", "callback")) else "POST"
    event = api_get(path) if usual == "GET" else api_event(path, b"", {})
    event["requestContext"]["http"]["method"] = draw(st.sampled_from([usual] * 6 + ["GET", "post", "PUT", ""]))
    event["requestContext"]["stage"] = draw(st.sampled_from(["$default", "$default", "prod", ""]))
    event["headers"] = draw(st.dictionaries(st.sampled_from(NAMES) | st.text(max_size=10), TEXT, max_size=5))
    event["queryStringParameters"] = draw(st.none() | st.dictionaries(st.sampled_from(QUERY), TEXT, max_size=4))
    raw = draw(st.binary(max_size=200) | st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")))
    encoded = draw(st.booleans())
    event["isBase64Encoded"] = encoded
    event["body"] = draw(st.sampled_from([base64.b64encode(raw).decode(), "%%%", None])) if encoded else (
        raw.decode("utf-8", "surrogateescape") if draw(st.booleans()) else None)  # fmt: skip
    return event


def test_any_request_gets_its_routes_answer_and_queues_nothing_unsigned(app: Surface) -> None:
    @FAST
    @given(event=requests())
    def check(event: dict[str, Any]) -> None:
        _, sent = app.answered(event)
        assert sent == []

    check()


def test_a_connect_link_with_any_query_or_provider_is_a_page_that_says_why(app: Surface) -> None:
    """The authorisation routes with a real ask kept: whatever the query and the provider's segment, a redirect to
    the provider (the ask, whole) or a page with the reason — and the client's secret and state key nowhere."""
    assert app.flow is not None
    kept = ask(app.flow)

    @FAST
    @given(provider=st.sampled_from(["local", "LOCAL", "github"]) | SEGMENT, route=st.sampled_from(OAUTH),
           query=st.dictionaries(st.sampled_from(["ask", "state", "code", "error"]),
                                 st.sampled_from([kept, f"{kept},{kept}", kept + "."]) | TEXT, max_size=4))  # fmt: skip
    @example(provider="local", route="start", query={"ask": kept})
    @example(provider="local", route="callback", query={"state": f"{'A' * 43}.{'0' * 64}", "code": "c"})
    def check(provider: str, route: str, query: dict[str, str]) -> None:
        url = f"/oauth/{quote(provider)}/{route}?" + urllib.parse.urlencode(query, errors="surrogatepass")
        answer, sent = app.answered(api_get(url))
        assert answer["headers"]["Content-Type"].startswith("text/html") or answer["statusCode"] == 404
        if answer["statusCode"] == 302:
            assert route == "start" and query.get("ask") == kept and provider == "local"
        assert sent == []

    check()


CASES: list[Callable[[str], str]] = [str.lower, str.upper, str.title, lambda name: name]
EVENTS = itertools.count()


def test_a_valid_request_keeps_its_answer_in_any_header_case_or_body_encoding_and_queues_once(app: Surface) -> None:
    """Slack's retries (a new timestamp and signature, X-Slack-Retry-Num) and API Gateway's base64: one message."""

    @settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
    @given(retries=st.lists(st.tuples(st.sampled_from(CASES), st.booleans()), min_size=1, max_size=3))
    def check(retries: list[tuple[Callable[[str], str], bool]]) -> None:
        number = next(EVENTS)  # a new event each time: Hypothesis runs an example again as it shrinks
        body = json.dumps(slack_mention(f"EvSurface{number}")).encode()
        queued = []
        for attempt, (case, encoded) in enumerate(retries):
            event = signed_slack("/slack/events", body, **({"X-Slack-Retry-Num": str(attempt)} if attempt else {}))
            event["headers"] = {case(name): value for name, value in event["headers"].items()}
            if encoded:
                event["body"], event["isBase64Encoded"] = base64.b64encode(body).decode(), True
            answer, sent = app.answered(event)
            assert answer["statusCode"] == 200, answer["body"]
            queued += sent
        assert [event_of(s).dedup_key for s in queued] == [f"slack:EvSurface{number}"]

    check()


def test_a_header_given_twice_is_joined_and_refused_not_half_read(app: Surface) -> None:
    """API Gateway joins a repeated header with commas: the valid signature and another is no signature."""
    body = json.dumps(slack_mention("EvTwice")).encode()
    event = signed_slack("/slack/events", body)
    event["headers"]["x-slack-signature"] += ",v0=" + "0" * 64
    answer, sent = app.answered(event)
    assert answer["statusCode"] == 401 and sent == []


class Throttled(LocalQueue):
    """serve's queue, refusing its first message as a queue that is down would."""

    def __init__(self, store: LocalStore) -> None:
        super().__init__(store)
        self.refusals = 1

    def _send(self, body: str, *, group: str, dedup: str) -> str:
        if self.refusals:
            self.refusals -= 1
            raise ConnectionError("the queue is down")
        return super()._send(body, group=group, dedup=dedup)


def test_a_delivery_whose_enqueue_failed_is_queued_by_its_retry_under_serves_records(tmp_path: Path) -> None:
    """Was: the local store's records could not be cleared after a failed enqueue (Powertools hands over a record
    without a status), so the record stayed in progress and Slack's retry was a "duplicate": the event was lost."""
    store = LocalStore(tmp_path / "state")
    queue = Throttled(store)
    webhook = create_app(TriggerConfig.from_env(ENV), queue=queue, persistence=StorePersistenceLayer(store),
                         workflows=workflows())  # fmt: skip
    body = json.dumps(slack_mention("EvThrottled")).encode()
    down = webhook.handle(signed_slack("/slack/events", body), FakeContext())  # an outage: Slack retries
    assert (down["statusCode"], down["headers"]["Retry-After"]) == (503, "60"), down
    retried = webhook.handle(signed_slack("/slack/events", body, **{"X-Slack-Retry-Num": "1"}), FakeContext())
    assert json.loads(retried["body"]) == {"status": "queued", "workflow": "design-review"}
    assert queue.messages.qsize() == 1
