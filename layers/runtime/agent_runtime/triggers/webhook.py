"""The webhook routes: verify, deduplicate (Powertools idempotency), route, enqueue, answer fast.

Nothing here runs the agent. Every refusal says why in the log and in a short JSON body; nothing is enqueued.
"""

from __future__ import annotations

import base64
import copy
import functools
import json
import secrets as token_source
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from aws_lambda_powertools.utilities.idempotency import IdempotencyConfig, idempotent_function
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer

from .. import snapstart, telemetry
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..stores.base import Store
from ..stores.ids import RUN_ID, check_thread_id
from ..stores.opening import open_store
from ..workflows import Workflow
from ..workflows.triggers import Routed
from . import fields, jira, signed, slack
from .config import TriggerConfig, all_workflows
from .event import Challenge, Ignored, PaneEvent, TriggerEvent
from .exceptions import RejectedRequest
from .handshakes import Handshakes
from .idempotency import dynamodb_layer
from .payload import parse_json
from .queue import EventQueue, SqsQueue
from .queued import EventMessage, PaneMessage, StopMessage

PAGE_KEY = "run_page_key"  # pages.KEY: the integrations secret's key that signs run pages' links
DEDUP_SECONDS = 24 * 3600  # Slack retries for ~5 minutes, JIRA for ~30; a day covers late replays too


@dataclass(frozen=True)
class Webhook:
    """The routes and the idempotency config whose in-progress records must expire with each invocation."""

    app: APIGatewayHttpResolver
    idempotency: IdempotencyConfig

    def handle(self, event: dict[str, Any], context: Any) -> dict[str, Any]:
        self.idempotency.register_lambda_context(context)  # a crashed invocation's record then expires with it
        return self.app.resolve(event, context)


def route(event: Routed, workflows: Sequence[Workflow]) -> str | None:
    """The first workflow (by name) whose ``triggers`` match the event."""
    for workflow in sorted(workflows, key=lambda w: w.name):
        if workflow.triggers.matches(event):
            return workflow.name
    return None


def create_app(
    config: TriggerConfig,
    *,
    queue: EventQueue,
    persistence: BasePersistenceLayer,
    workflows: Sequence[Workflow],
    logger: Logger | None = None,
    clock: Callable[[], float] = time.time,
    store: Callable[[], Store] | None = None,
) -> Webhook:
    """``store``: where Notion's verification tokens are kept for the admin (made on first use)."""
    app = APIGatewayHttpResolver()
    enqueue, idempotency = _idempotent_enqueue(queue, persistence)
    log = logger or Logger(service="agent-runtime-webhook")
    routes = _Routes(config, queue, enqueue, workflows, log, clock, store)
    app.post("/slack/events")(lambda: routes.guarded(lambda: _slack(app.current_event.raw_event, config, clock())))
    app.post("/jira/webhook")(lambda: routes.guarded(lambda: _jira(app.current_event.raw_event, config, clock())))
    app.post("/runs")(lambda: routes.guarded(lambda: _api_run(app.current_event.raw_event, config, workflows)))
    app.post("/slack/interactivity")(lambda: routes.interactivity(app.current_event.raw_event))
    app.post("/runs/<run_id>/stop")(lambda run_id: routes.stop(app.current_event.raw_event, run_id))
    app.post("/hooks/<name>")(lambda name: routes.guarded(lambda: routes.signed(app.current_event.raw_event, name)))
    app.get("/runs/<run_id>/page")(lambda run_id: routes.page(app.current_event.raw_event, run_id))
    return Webhook(app, idempotency)


@dataclass
class _Routes:
    """What every route shares: verify (the route's parser), answer a refusal, route and enqueue what is accepted."""

    config: TriggerConfig
    queue: EventQueue
    enqueue: Callable[..., dict[str, Any]]
    workflows: Sequence[Workflow]
    log: Logger
    clock: Callable[[], float]
    store: Callable[[], Store] | None = None

    def guarded(
        self, handler: Callable[[], TriggerEvent | signed.Delivery | PaneEvent | Ignored | Challenge]
    ) -> Response[str]:
        try:
            return self.accept(handler())
        except RejectedRequest as error:
            return self.refused(error)

    def refused(self, error: RejectedRequest) -> Response[str]:
        self.log.warning("rejected", extra={"status": error.status, "reason": error.reason})
        return _json(error.status, {"error": error.reason})

    def accept(self, result: TriggerEvent | signed.Delivery | PaneEvent | Ignored | Challenge) -> Response[str]:
        signed_key = result.signed_key if isinstance(result, signed.Delivery) else None
        result = result.event if isinstance(result, signed.Delivery) else result
        if isinstance(result, Challenge):
            return Response(200, "text/plain", result.challenge)
        if isinstance(result, PaneEvent):
            return _pane(result, self.workflows, self.queue, self.log)
        if isinstance(result, Ignored):
            self.log.info("ignored", extra={"reason": result.reason})
            return _json(200, {"status": "ignored", "reason": result.reason})
        self.log.set_correlation_id(result.correlation_id)
        if slack.says_stop(result):  # in a group of its own: the run it stops holds the thread's
            stop = StopMessage("", result.user, "slack", said=result).body()
            self.queue.send(stop, group=f"stop:{result.thread_id}", dedup=result.dedup_key)
            self.log.info("stop queued", extra={"via": "message"})
            return _json(200, {"status": "stop requested"})
        name = result.workflow or route(result, self.workflows)
        if name is None:
            self.log.info("no workflow matches", extra={"source": result.source, "attributes": dict(result.attributes)})
            return _json(200, {"status": "ignored", "reason": "no workflow's triggers match this event"})
        event = TriggerEvent.from_dict({**result.to_dict(), "workflow": name})
        with telemetry.span(
            f"receive {event.source}", {"agent_runtime.workflow": name, "agent_runtime.kind": event.kind}
        ):
            status = _send(self.enqueue, event, signed_key)
        self.log.info("accepted", extra={"status": status, "workflow": name, "source": event.source})
        return _json(200, {"status": status, "workflow": name})

    def signed(self, raw: dict[str, Any], name: str) -> signed.Delivery | Ignored:
        """A signed delivery for the workflow named in the route (``triggers.webhook``)."""
        workflow = next((w for w in self.workflows if w.name == name and w.triggers.webhook is not None), None)
        if workflow is None or workflow.triggers.webhook is None:
            raise RejectedRequest(404, "no workflow takes webhooks at this route")
        key = workflow.triggers.webhook.secret
        result = signed.parse(raw.get("headers") or {}, _raw_body(raw), workflow, self.config.secret(key),
                              self.clock(), unset=_secret_source(self.config, key))  # fmt: skip
        if not isinstance(result, signed.Handshake):
            return result
        if self.store is None:
            raise RejectedRequest(503, "this server keeps no verification tokens (no store)")
        Handshakes(self.store()).save(name, result.token, self.clock())
        self.log.info("verification token kept", extra={"workflow": name})  # never the token itself
        return Ignored(f"Notion's verification token is kept: agent-runtime workflows webhook-token {name}")

    def stop(self, raw: dict[str, Any], run_id: str) -> Response[str]:
        """``POST /runs/{run_id}/stop``, authenticated as ``POST /runs`` is: the worker writes the request."""
        try:
            caller = _api_caller(raw, self.config)
            fields.token(run_id, "the run id", RUN_ID, status=400)  # whole: it goes to the queue
        except RejectedRequest as error:
            return self.refused(error)
        message = StopMessage(run_id, f"api:{caller}", "api").body()
        self.queue.send(message, group=f"stop:{run_id}", dedup=f"api-stop:{run_id}:{token_source.token_hex(8)}")
        self.log.info("stop queued", extra={"via": "api"})
        return _json(202, {"status": "stop requested", "run_id": run_id})

    def page(self, raw: dict[str, Any], run_id: str) -> Response[str]:
        """``GET /runs/{run_id}/page?expires=…&private=…&signature=…``: that run's page, for a signed link only."""
        from ..pages.route import HEADERS, PageNotServed, declared_secrets, served

        secrets = lambda: self.config.secret_values(declared_secrets(self.workflows))  # noqa: E731 (made if served)
        query = raw.get("queryStringParameters") or {}
        try:
            page, private = served(run_id, query, key=self.config.secret(PAGE_KEY), store=self.store,
                                   secrets=secrets, now=self.clock())  # fmt: skip
        except PageNotServed as refused:
            return self.refused(RejectedRequest(refused.status, refused.reason))
        self.log.info("run page served", extra={"private": private})
        return Response(200, "text/html; charset=utf-8", page, headers=HEADERS)

    def interactivity(self, raw: dict[str, Any]) -> Response[str]:
        try:
            body = _raw_body(raw)
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


def _pane(event: PaneEvent, workflows: Sequence[Workflow], queue: EventQueue, log: Logger) -> Response[str]:
    """For the worker (the Web API calls are its job), when there is something to do: the workflow's suggested
    prompts to offer, or an assistant thread to mark (and the channel the person looks at beside it)."""
    name = route(event, workflows)
    workflow = next((w for w in workflows if w.name == name), None)
    prompts = workflow.triggers.slack.suggested_prompts if workflow and workflow.triggers.slack else ()
    if workflow is None or (event.kind == "opened" and event.thread_ts is None and not prompts):
        reason = "no workflow takes direct messages" if workflow is None else "no suggested prompts"
        log.info("ignored", extra={"reason": reason})
        return _json(200, {"status": "ignored", "reason": reason})
    queue.send(PaneMessage(event, workflow.name).body(), group=event.thread_id, dedup=event.dedup_key)
    log.info("pane event queued", extra={"kind": event.kind, "workflow": workflow.name})
    return _json(200, {"status": "queued", "workflow": workflow.name})


def _slack(raw: dict[str, Any], config: TriggerConfig, now: float) -> TriggerEvent | PaneEvent | Ignored | Challenge:
    body = _raw_body(raw)
    secret = config.secret("slack_signing_secret")
    if not secret:
        raise RejectedRequest(401, "Slack is not configured (no signing secret)")
    slack.verify(raw.get("headers") or {}, body, secret, now=now)
    return slack.parse(body, bot_user_id=config.slack_bot_user_id)


def _jira(raw: dict[str, Any], config: TriggerConfig, now: float) -> TriggerEvent | Ignored:
    body = _raw_body(raw)
    webhook_secret, shared = config.secret("jira_webhook_secret"), config.secret("jira_shared_secret")
    jira.verify(raw.get("headers") or {}, body, webhook_secret=webhook_secret, shared_secret=shared)
    return jira.parse(body, bot_account_id=config.jira_bot_account_id, now=now)


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


def _api_caller(raw: dict[str, Any], config: TriggerConfig) -> str:
    """Who calls the /runs routes: the IAM caller's ARN, or "api-key" (the key checked); else a 401."""
    headers = {k.lower(): v for k, v in (raw.get("headers") or {}).items()}
    key = config.secret("api_key")
    iam = ((raw.get("requestContext") or {}).get("authorizer") or {}).get("iam")
    if key:
        given = fields.text(headers.get("authorization"), "Authorization (Bearer and the API key)")
        if not fields.same(given, f"Bearer {key}"):
            raise RejectedRequest(401, "missing or wrong API key (Authorization: Bearer ...)")
    elif not iam:
        raise RejectedRequest(401, "the /runs route needs IAM authorization or an API key")
    return str(iam.get("userArn") if isinstance(iam, dict) else "api-key")


def _api_run(raw: dict[str, Any], config: TriggerConfig, workflows: Sequence[Workflow]) -> TriggerEvent:
    caller = _api_caller(raw, config)
    body = parse_json(_raw_body(raw), "the body")
    if (
        not isinstance(body, dict)
        or not isinstance(body.get("workflow"), str)
        or not isinstance(body.get("message"), str)
    ):
        raise RejectedRequest(400, "the body needs 'workflow' and 'message' strings")
    if body["workflow"] not in {w.name for w in workflows}:
        raise RejectedRequest(400, f"unknown workflow {body['workflow']!r}")
    request_id = str(body.get("request_id") or token_source.token_hex(12))
    thread = str(body.get("thread_id") or f"api-{request_id}")
    try:
        check_thread_id(thread)
    except ConfigError as error:
        raise RejectedRequest(400, str(error)) from None
    return TriggerEvent(
        source="api",
        kind="api",
        dedup_key=f"api:{request_id}",
        text=body["message"],
        user=caller,
        thread_id=thread,
        correlation_id=request_id,
        workflow=body["workflow"],
    )


def _raw_body(raw: dict[str, Any]) -> bytes:
    """The bytes the sender signed: API Gateway base64-encodes some bodies (Slack's form posts on HTTP APIs)."""
    body = raw.get("body") or ""
    if raw.get("isBase64Encoded"):
        try:
            return base64.b64decode(body, validate=True)
        except ValueError:
            raise RejectedRequest(400, "the body is not valid base64") from None
    try:
        return body.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (an escape in the event's JSON): no sender signed that
        raise RejectedRequest(400, "the body is not UTF-8") from None


def _secret_source(config: TriggerConfig, key: str) -> str:
    """Where a secret is read where this runs: the integrations secret's key on AWS, the environment locally."""
    if config.secrets_name:
        return f"the integrations secret's key {key!r}"
    return f"{key.upper()} in the environment (the integrations secret's key {key!r} when deployed)"


def _json(status: int, body: dict[str, Any]) -> Response[str]:
    return Response(status, "application/json", json.dumps(body))


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
    if snapstart.snapshotting():
        snapstart.after_restore(functools.partial(snapstart.close_connections, sqs, dynamodb))
    workflows = all_workflows(runtime)
    return create_app(triggers, queue=queue, persistence=persistence, workflows=workflows, logger=logger, store=store)
