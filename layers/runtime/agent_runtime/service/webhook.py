"""The webhook routes: each source's (``sources``: its parser verifies), deduplicate (Powertools idempotency),
route, enqueue, answer fast; and the routes every source shares (a click, a stop by the API, a run's page).

Nothing here runs the agent. Every refusal says why in the log and in a short JSON body; nothing is enqueued. When
the queue or the idempotency records are down, the answer is 503 with ``Retry-After``: nothing is enqueued, nor
recorded, so the sender's retry is taken.
"""

from __future__ import annotations

import functools
import json
import secrets as token_source
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

from .. import snapstart, telemetry
from ..access import Access
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..ids import RUN_ID, check_thread_id
from ..inbound import Challenge, Ignored, TriggerEvent
from ..sources import BUILTIN, Queued, Request, Source, Sources
from ..sources.base import Intake
from ..stores.base import Store
from ..stores.opening import open_store
from ..triggers import api, fields, slack
from ..triggers.config import TriggerConfig, WorkflowsWhenUsed
from ..triggers.exceptions import RejectedRequest, Unavailable
from ..triggers.idempotency import Once, dynamodb_layer
from ..triggers.payload import raw_body
from ..triggers.queue import EventQueue, SqsQueue
from ..triggers.queued import EventMessage, RefusedMessage, StopMessage
from ..triggers.signed import Delivery
from ._http import Response, Router, json_response
from .oauth import OAuthRoutes

if TYPE_CHECKING:
    from ..identity.flow import ConnectFlow
    from ..workflows import Workflow

PAGE_KEY = "run_page_key"  # pages.KEY: the integrations secret's key that signs run pages' links
RETRY_AFTER = "60"  # seconds: Slack's second retry comes about a minute after its first


@dataclass(frozen=True)
class Webhook:
    """The routes, and what is queued once per delivery (its in-progress records expire with each invocation)."""

    app: Router
    once: Once
    log: Logger

    def handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.once.config.register_lambda_context(context)  # a crashed invocation's record then expires with it
        try:
            return self.app.resolve(event)
        except Unavailable as down:  # an outage, not a bug: the sender is asked to come back (a 500 is a bug's)
            self.log.warning("unavailable", extra={"reason": down.reason, "error": repr(down.__cause__)[:200]})
            body = json.dumps({"error": f"{down.reason}; retry later"})
            return Response(503, "application/json", body, {"Retry-After": RETRY_AFTER}).proxy()


def create_app(
    config: TriggerConfig,
    *,
    queue: EventQueue,
    persistence: BasePersistenceLayer,
    workflows: Sequence[Workflow],
    logger: Logger | None = None,
    clock: Callable[[], float] = time.time,
    store: Callable[[], Store] | None = None,
    sources: Sources = BUILTIN,
    connect: Callable[[], ConnectFlow] | None = None,
) -> Webhook:
    """``store``: where Notion's verification tokens are kept for the admin (made on first use). ``sources``: each
    mounts its route (``POST``), parses what comes to it and routes its events. ``connect``: people's connections
    to OAuth providers (the authorisation routes; made on first use)."""
    app = Router()
    log = logger or Logger(service="agent-runtime-webhook")
    once = Once(queue, persistence, log)
    routes = _Routes(config, queue, once, workflows, log, clock, sources, store)
    for source in sources.routed():
        app.add("POST", str(source.route), _taking(routes, source))
    app.add("POST", "/slack/interactivity", routes.interactivity)
    app.add("POST", "/runs/<run_id>/stop", routes.stop)
    app.add("GET", "/runs/<run_id>/page", routes.page)
    oauth = OAuthRoutes(connect, queue, log)
    app.add("GET", "/oauth/<provider>/start", oauth.start)
    app.add("GET", "/oauth/<provider>/callback", oauth.callback)
    return Webhook(app, once, log)


def _taking(routes: _Routes, source: Source) -> Callable[..., Response]:
    """The route's handler: its request (with the route's path parameters) parsed by its source."""
    return lambda raw, **params: routes.guarded(lambda: source.parse(routes.request(raw, params)))


@dataclass
class _Routes:
    """What every route shares: verify (the route's parser), answer a refusal, route and enqueue what is accepted."""

    config: TriggerConfig
    queue: EventQueue
    once: Once  # what Slack may deliver again after SQS's 5-minute deduplication window: queued once a day
    workflows: Sequence[Workflow]
    log: Logger
    clock: Callable[[], float]
    sources: Sources
    store: Callable[[], Store] | None = None

    def request(self, raw: dict[str, Any], params: Mapping[str, str]) -> Request:
        return Request(raw, params, self.config, self.workflows, self.clock(), self.log, self.store)

    def guarded(self, handler: Callable[[], Intake]) -> Response:
        try:
            return self.accept(handler())
        except RejectedRequest as error:
            return self.refused(error)

    def refused(self, error: RejectedRequest) -> Response:
        self.log.warning("rejected", extra={"status": error.status, "reason": error.reason})
        return _json(error.status, {"error": error.reason})

    def accept(self, result: Intake) -> Response:
        signed_key = result.signed_key if isinstance(result, Delivery) else None
        result = result.event if isinstance(result, Delivery) else result
        if isinstance(result, Challenge):
            return Response(200, "text/plain", result.challenge)
        if isinstance(result, Queued):  # no run: sent as it is
            if not self.once.send(result.body, group=result.group, dedup=result.dedup):
                return _json(200, {**result.answer, "status": "duplicate"})
            self.log.info(result.said, extra=dict(result.extra))
            return _json(200, dict(result.answer))
        if isinstance(result, Ignored):
            self.log.info("ignored", extra={"reason": result.reason})
            return _json(200, {"status": "ignored", "reason": result.reason})
        self.log.set_correlation_id(result.correlation_id)
        try:  # what the worker's store would refuse is refused here, not queued as a message no worker takes
            check_thread_id(result.thread_id)
        except ConfigError:
            return self.refused(RejectedRequest(400, "the event's thread id is not one a run can keep"))
        stop = self.sources.of(result).stop(result)
        if stop is not None:  # in a group of its own: the run it stops holds the thread's
            # Once: replayed late, it would stop the thread's run of the moment, or say nothing works there.
            if not self.once.send(stop.body(), group=f"stop:{result.thread_id}", dedup=result.dedup_key):
                return _json(200, {"status": "duplicate"})
            self.log.info("stop queued", extra={"via": "message"})
            return _json(200, {"status": "stop requested"})
        name = result.workflow or self.sources.route(result, self.workflows)
        if name is None:
            self.log.info("no workflow matches", extra={"source": result.source, "attributes": dict(result.attributes)})
            return _json(200, {"status": "ignored", "reason": "no workflow's triggers match this event"})
        event = TriggerEvent.from_dict({**result.to_dict(), "workflow": name})
        refused = self.refused_at_door(event)
        if refused is not None:
            return refused
        with telemetry.span(
            f"receive {event.source}", {"agent_runtime.workflow": name, "agent_runtime.kind": event.kind}
        ):
            status = _send(self.once, event, signed_key)
        self.log.info("accepted", extra={"status": status, "workflow": name, "source": event.source})
        return _json(200, {"status": status, "workflow": name})

    def refused_at_door(self, event: TriggerEvent) -> Response | None:
        """The workflow's ``access.start``, decided here when the ids its groups list suffice (a Slack user group
        or a JIRA group is read by the worker, which decides then). A refused event starts nothing: its caller is
        told (an API call, a webhook: 403), or the person is, privately, by the worker (a refusal message)."""
        workflow = next((w for w in self.workflows if w.name == event.workflow), None)
        if workflow is None or not workflow.access:
            return None
        source = self.sources.of(event)
        verdict = Access(workflow).at_door(source.requester(event))
        if verdict is None or verdict.allowed:
            return None
        self.log.info("refused by access rules", extra={"workflow": workflow.name, "requester": verdict.who})
        if source.answers_caller:
            return _json(403, {"error": f"not started: {verdict.reason}"})
        message = RefusedMessage(event, verdict.reason).body()
        # Told once. Its key leads with what it is: an event id that ends in ":refused" is another event, not this.
        once = self.once.send(message, group=event.thread_id, dedup=f"refused:{event.dedup_key}")
        return _json(200, {"status": "refused" if once else "duplicate", "workflow": workflow.name})

    def stop(self, raw: dict[str, Any], run_id: str) -> Response:
        """``POST /runs/{run_id}/stop``, authenticated as ``POST /runs`` is: the worker writes the request."""
        try:
            caller = api.caller(raw, self.config)
            fields.token(run_id, "the run id", RUN_ID, status=400)  # whole: it goes to the queue
        except RejectedRequest as error:
            return self.refused(error)
        message = StopMessage(run_id, f"api:{caller}", "api").body()
        self.queue.send(message, group=f"stop:{run_id}", dedup=f"api-stop:{run_id}:{token_source.token_hex(8)}")
        self.log.info("stop queued", extra={"via": "api"})
        return _json(202, {"status": "stop requested", "run_id": run_id})

    def page(self, raw: dict[str, Any], run_id: str) -> Response:
        """``GET /runs/{run_id}/page?expires=…&private=…&signature=…``: that run's page, for a signed link only."""
        from ..pages.route import HEADERS, PageNotServed, declared_secrets, served

        secrets = lambda: self.config.secret_values(declared_secrets(self.workflows))  # noqa: E731 (made if served)
        query = raw.get("queryStringParameters") or {}
        try:
            page, private = served(
                run_id, query, key=self.config.secret(PAGE_KEY), store=self.store, secrets=secrets, now=self.clock()
            )
        except PageNotServed as refused:
            return self.refused(RejectedRequest(refused.status, refused.reason))
        self.log.info("run page served", extra={"private": private})
        return Response(200, "text/html; charset=utf-8", page, headers=HEADERS)

    def interactivity(self, raw: dict[str, Any]) -> Response:
        try:
            body = raw_body(raw)
            secret = self.config.secret("slack_signing_secret")
            if not secret:
                raise RejectedRequest(401, "Slack is not configured (no signing secret)")
            slack.verify(raw.get("headers") or {}, body, secret, now=self.clock())
            action = slack.parse_action(body)
        except RejectedRequest as error:
            return self.refused(error)
        if isinstance(action, Ignored):
            return _json(200, {"status": "ignored", "reason": action.reason})
        if not action.once:  # the worker's write is conditional (the first wins): SQS's window is enough
            self.queue.send(action.message, group=action.thread_id, dedup=action.dedup_key)
        elif not self.once.send(action.message, group=action.thread_id, dedup=action.dedup_key):
            return Response(200, "text/plain", "")  # a duplicate
        self.log.info("click queued", extra={"kind": action.message["type"]})
        return Response(200, "text/plain", "")  # acknowledged within Slack's 3 s; the worker updates the message


def _send(once: Once, event: TriggerEvent, signed_key: str | None = None) -> str:
    """``signed_key``: what the sender signed, when the event's own key is not (a second record: either one
    already there makes the delivery a duplicate)."""
    carrier: dict[str, str] = {}
    telemetry.inject(carrier)  # the run's trace continues the webhook's (one trace per Slack event)
    body = EventMessage(event, carrier or None).body()
    queued = once.send(body, group=event.thread_id, dedup=event.dedup_key, signed=signed_key)
    return "queued" if queued else "duplicate"


_json = json_response


def webhook_from_env(logger: Logger) -> Webhook:
    """The webhook function's app: SQS, the idempotency records in the runtime's table, the workflows."""
    import boto3
    from botocore.config import Config

    triggers, runtime = TriggerConfig.from_env(), RuntimeConfig.from_env()
    if not (triggers.table and triggers.queue_url):
        raise RuntimeError("the webhook function needs AGENT_TABLE and AGENT_QUEUE_URL")
    snapstart.install()  # after a restore: its own random state, no cached secret (read per request)
    session = boto3.session.Session()  # one session: the second client reuses its loaded endpoint data
    # An outage answered (503) before the function's 10 s timeout, not after botocore's 60 s connect timeout and
    # its legacy mode's four retries: short timeouts, one retry (a send takes tens of milliseconds).
    quick = Config(connect_timeout=1, read_timeout=3, retries={"mode": "standard", "max_attempts": 2})
    sqs, dynamodb = session.client("sqs", config=quick), session.client("dynamodb", config=quick)
    store = functools.cache(  # S3 + DynamoDB clients only when a large body or a handshake needs them
        lambda: open_store(table=triggers.table, bucket=triggers.bucket, state_dir=runtime.state_dir, session=session)
    )
    queue = SqsQueue(sqs, triggers.queue_url, store_factory=store)
    persistence = dynamodb_layer(triggers.table, client=dynamodb)
    workflows = WorkflowsWhenUsed(runtime)  # loaded by the first request (before the snapshot, under SnapStart)
    if snapstart.snapshotting():
        snapstart.before_snapshot(workflows.__len__)
        snapstart.after_restore(functools.partial(snapstart.close_connections, sqs, dynamodb))
    kms = functools.cache(lambda: session.client("kms"))

    @functools.cache
    def connect() -> ConnectFlow:  # the first link followed loads the flow, not every cold start
        from .connections import flow_from_env

        return flow_from_env(store(), runtime, triggers.secret, kms)

    return create_app(
        triggers,
        queue=queue,
        persistence=persistence,
        workflows=workflows,
        logger=logger,
        store=store,
        sources=BUILTIN,
        connect=connect,
    )
