"""The webhook routes: each source's (``sources``: its parser verifies), deduplicate (Powertools idempotency),
route, enqueue, answer fast; and the routes every source shares (a click, a stop by the API, a run's page).

Nothing here runs the agent. Every refusal says why in the log and in a short JSON body; nothing is enqueued.
"""

from __future__ import annotations

import copy
import functools
import secrets as token_source
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

from .. import snapstart, telemetry
from ..access import Access
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..inbound import Challenge, Ignored, TriggerEvent
from ..sources import BUILTIN, Queued, Request, Source, Sources
from ..sources.base import Intake
from ..stores.base import Store
from ..stores.ids import RUN_ID, check_thread_id
from ..stores.opening import open_store
from ..triggers import api, fields, slack
from ..triggers.config import TriggerConfig, WorkflowsWhenUsed
from ..triggers.exceptions import RejectedRequest
from ..triggers.idempotency import dynamodb_layer
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
DEDUP_SECONDS = 24 * 3600  # Slack retries for ~5 minutes, JIRA for ~30; a day covers late replays too


@dataclass(frozen=True)
class Webhook:
    """The routes and the idempotency config whose in-progress records must expire with each invocation."""

    app: Router
    idempotency: IdempotencyConfig

    def handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.idempotency.register_lambda_context(context)  # a crashed invocation's record then expires with it
        return self.app.resolve(event)


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
    enqueue, idempotency = _idempotent_enqueue(queue, persistence)
    log = logger or Logger(service="agent-runtime-webhook")
    routes = _Routes(config, queue, enqueue, workflows, log, clock, sources, store)
    for source in sources.routed():
        app.add("POST", str(source.route), _taking(routes, source))
    app.add("POST", "/slack/interactivity", routes.interactivity)
    app.add("POST", "/runs/<run_id>/stop", routes.stop)
    app.add("GET", "/runs/<run_id>/page", routes.page)
    oauth = OAuthRoutes(connect, queue, log)
    app.add("GET", "/oauth/<provider>/start", oauth.start)
    app.add("GET", "/oauth/<provider>/callback", oauth.callback)
    return Webhook(app, idempotency)


def _taking(routes: _Routes, source: Source) -> Callable[..., Response]:
    """The route's handler: its request (with the route's path parameters) parsed by its source."""
    return lambda raw, **params: routes.guarded(lambda: source.parse(routes.request(raw, params)))


@dataclass
class _Routes:
    """What every route shares: verify (the route's parser), answer a refusal, route and enqueue what is accepted."""

    config: TriggerConfig
    queue: EventQueue
    enqueue: Callable[..., dict[str, Any]]
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
            self.queue.send(result.body, group=result.group, dedup=result.dedup)
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
            self.queue.send(stop.body(), group=f"stop:{result.thread_id}", dedup=result.dedup_key)
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
            status = _send(self.enqueue, event, signed_key)
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
        self.queue.send(message, group=event.thread_id, dedup=f"{event.dedup_key}:refused")
        return _json(200, {"status": "refused", "workflow": workflow.name})

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
        self.queue.send(action.message, group=action.thread_id, dedup=action.dedup_key)
        self.log.info("click queued", extra={"kind": action.message["type"]})
        return Response(200, "text/plain", "")  # acknowledged within Slack's 3 s; the worker updates the message


def _send(enqueue: Callable[..., dict[str, Any]], event: TriggerEvent, signed_key: str | None = None) -> str:
    """``signed_key``: what the sender signed, when the event's own key is not (a second record: either one
    already there makes the delivery a duplicate)."""
    nonce = token_source.token_hex(8)
    carrier: dict[str, str] = {}
    telemetry.inject(carrier)  # the run's trace continues the webhook's (one trace per Slack event)
    try:
        message = {"dedup_key": event.dedup_key, "nonce": nonce, "event": event.to_dict(), "trace": carrier}
        result = enqueue(message, signed_key)
    except IdempotencyAlreadyInProgressError:
        return "duplicate"  # the same event is being enqueued by a concurrent delivery
    return "queued" if result.get("nonce") == nonce else "duplicate"


def _idempotent_enqueue(
    queue: EventQueue, persistence: BasePersistenceLayer
) -> tuple[Callable[..., dict[str, Any]], IdempotencyConfig]:
    config = IdempotencyConfig(
        event_key_jmespath="dedup_key", expires_after_seconds=DEDUP_SECONDS, raise_on_no_idempotency_key=True
    )

    @idempotent_function(  # type: ignore[untyped-decorator]
        data_keyword_argument="message", persistence_store=persistence, config=config
    )
    def enqueue(message: dict[str, Any]) -> dict[str, Any]:
        event = TriggerEvent.from_dict(message["event"])
        body = EventMessage(event, message.get("trace") or None).body()
        message_id = queue.send(body, group=event.thread_id, dedup=message["dedup_key"])
        return {"nonce": message["nonce"], "message_id": message_id}

    # A delivery keyed twice (by what was signed, then by its own id) is this record around that one. Powertools
    # configures a persistence layer once, for one function: the outer record needs a layer of its own.
    @idempotent_function(  # type: ignore[untyped-decorator]
        data_keyword_argument="message", persistence_store=copy.copy(persistence), config=config
    )
    def enqueue_signed(message: dict[str, Any]) -> dict[str, Any]:
        return enqueue(message=message["delivery"])  # type: ignore[no-any-return]

    def send(message: dict[str, Any], signed_key: str | None) -> dict[str, Any]:
        if signed_key is None:
            return enqueue(message=message)  # type: ignore[no-any-return]
        return enqueue_signed(message={"dedup_key": signed_key, "delivery": message})  # type: ignore[no-any-return]

    return send, config


_json = json_response


def webhook_from_env(logger: Logger) -> Webhook:
    """The webhook function's app: SQS, the idempotency records in the runtime's table, the workflows."""
    import boto3

    triggers, runtime = TriggerConfig.from_env(), RuntimeConfig.from_env()
    if not (triggers.table and triggers.queue_url):
        raise RuntimeError("the webhook function needs AGENT_TABLE and AGENT_QUEUE_URL")
    snapstart.install()  # after a restore: its own random state, no cached secret (read per request)
    session = boto3.session.Session()  # one session: the second client reuses its loaded endpoint data
    sqs, dynamodb = session.client("sqs"), session.client("dynamodb")
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
