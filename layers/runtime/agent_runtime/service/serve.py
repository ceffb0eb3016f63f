"""``agent-runtime serve``: the webhook routes on 127.0.0.1 with the worker in-process, on the local store.

Point a Slack app (through a tunnel) or curl at it: requests go through the same verification, deduplication,
routing, worker and replies as in AWS; only the queue is in memory and the store is AGENT_STATE_DIR.
"""

from __future__ import annotations

import base64
import errno
import functools
import json
import logging
import threading
import time
import urllib.parse
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from ..chat.exceptions import Unreachable
from ..config import RuntimeConfig
from ..deadline import Deadline
from ..errors import ConfigError
from ..runtime import open_model
from ..sandbox import sandbox_for
from ..sources import BUILTIN, Sources
from ..stores import LocalStore, RunStore
from ..triggers import fields
from ..triggers.config import TriggerConfig, all_workflows
from ..triggers.idempotency import StorePersistenceLayer
from ..triggers.queue import LocalQueue, decode
from ..triggers.queued import TickMessage
from ..triggers.schedules import dedup_id, due
from .again import FIRST_SECONDS, backoff
from .connections import flow_from_env
from .lanes import WIDTH, Lanes
from .resumed import resume_interrupted
from .setup import replies_for
from .wakeups import TimerWakeups
from .webhook import create_app
from .worker import Process, Worker

if TYPE_CHECKING:
    from ..playground import Playground

log = logging.getLogger(__name__)
MAX_BODY_BYTES = 10 * 1024 * 1024
MAX_DRAINED_BYTES = 64 * 1024 * 1024  # a body over the limit is read and dropped up to this, so the 413 is heard
READ_TIMEOUT = 15.0  # a client silent this long loses its connection (it must not hold a thread forever)
TICK_SECONDS = 15.0  # how often the schedules' clock is read: a tick fires within this of its time
POLL_SECONDS = 0.2  # how soon the listener sees close (its shutdown waits for it)
JSON = {"Content-Type": "application/json"}  # serve's own refusals: the shape of the webhook's


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # the listen backlog (the default 5 reset connections under a burst of webhooks)
    local: LocalServer  # what its requests go through


class LocalServer:
    read_timeout = READ_TIMEOUT
    tick_every = TICK_SECONDS
    retry_first = FIRST_SECONDS  # the first wait before a message Slack could not take is tried again
    lanes: tuple[Lanes, ...] = ()  # the runs' and the stops', once started

    def __init__(
        self,
        runtime: RuntimeConfig,
        triggers: TriggerConfig,
        *,
        host: str = "127.0.0.1",
        port: int = 8080,
        playground: bool = False,
    ):
        self.http = _listen(host, port)  # bound first: its port (0: any) is in run pages' links
        self.http.local = self
        triggers, runtime = self._settings(triggers, runtime, playground)
        self.triggers, self.runtime = triggers, runtime  # as serve runs them (the playground's secrets, its URL)
        self.store = LocalStore(runtime.state_dir)
        self.queue = LocalQueue(self.store, apart=("stop:",))
        # One logger each, cleared per request and per message as the Lambda handlers are: a request's log
        # line never carries the previous event's correlation id or run id.
        self.webhook_log = Logger(service="agent-runtime-serve")
        self.tick_log = Logger(service="agent-runtime-serve-schedules")
        sources = BUILTIN  # one registry for the routes and the worker
        # People's connections (tools acting as the requester): sealed in this state directory by its key file,
        # or by AGENT_KMS_KEY_ID's key; `agent-runtime run` with AGENT_API_URL at this server connects through it.
        # The links' state is signed and checked here alone: a key file of the state directory does where
        # OAUTH_STATE_KEY is unset (a Lambda's copies need the one of the integrations secret).
        self.connect = flow_from_env(self.store, runtime, triggers.secret, _kms, local_state_key=True)
        self.webhook = create_app(
            triggers,
            queue=self.queue,
            persistence=StorePersistenceLayer(self.store),
            workflows=(workflows := all_workflows(runtime)),
            logger=self.webhook_log,
            store=lambda: self.store,
            sources=sources,
            connect=lambda: self.connect,
        )
        self.workflows = workflows  # their schedules fire here, as EventBridge Scheduler fires them on AWS
        self.clock: Callable[[], datetime] = lambda: datetime.now(UTC)
        self.sandbox = sandbox_for(runtime)
        self.wakeups = TimerWakeups(self.queue)  # an approval that expires wakes its run, as on AWS
        # Lanes, as Lambda invocations on AWS (lanes.WIDTH says why four): a worker each, with a logger of its own
        # (a run's keys never on another's lines).
        self.workers = [self._worker(runtime, triggers, _lane_log(n), sources) for n in range(1, WIDTH + 1)]
        self.worker, self.worker_log = self.workers[0], self.workers[0].process.log
        # A stop's message group is worked on beside the runs it stops (another Lambda invocation on AWS), never
        # behind them, even with every lane busy: a worker of its own.
        self.stop_log = Logger(service="agent-runtime-serve-stops")
        self.stopper = self._worker(runtime, triggers, self.stop_log, sources)
        self.outcomes: list[str] = []
        self._stop = threading.Event()

    def _worker(self, runtime: RuntimeConfig, triggers: TriggerConfig, said: Logger, sources: Sources) -> Worker:
        process = Process(
            runtime,
            store=self.store,
            queue=self.queue,
            models=lambda workflow: open_model(workflow, runtime),
            replies=replies_for(triggers),
            sandbox=self.sandbox,
            log=said,
            max_attachment_bytes=triggers.max_attachment_bytes,
            secrets=triggers.secret,
            wakeups=self.wakeups,
            sources=sources,
            connect=self.connect,
        )
        return Worker(process)

    def _settings(
        self, triggers: TriggerConfig, runtime: RuntimeConfig, playground: bool
    ) -> tuple[TriggerConfig, RuntimeConfig]:
        """Run pages' links (with RUN_PAGE_KEY set) point here, as on AWS at the API; with the playground, Slack and
        JIRA are its own (the page, and the APIs it stands in for: ``playground``)."""
        if runtime.api_url is None:
            runtime = replace(runtime, api_url=self.url)
        self.playground: Playground | None = None
        if not playground:
            return triggers, runtime
        from ..playground import Playground

        self.playground = Playground(runtime.state_dir, self.url, all_workflows(runtime), fire=self.fire_now)
        return self.playground.configure(triggers, runtime)

    @property
    def url(self) -> str:
        host, port = self.http.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> LocalServer:
        resume_interrupted(RunStore(self.store), self.queue, self.worker_log)  # what a stop mid-run left under way
        threading.Thread(target=self.http.serve_forever, args=(POLL_SECONDS,), daemon=True).start()
        self.lanes = (
            Lanes(self.queue.messages, [functools.partial(self._handle, w) for w in self.workers], self._stop).start(),
            Lanes(self.queue.beside, [functools.partial(self._handle, self.stopper)], self._stop).start("serve-stops"),
        )
        threading.Thread(target=self._tick, args=(self.tick_every,), daemon=True).start()
        return self

    def _tick(self, every: float = TICK_SECONDS) -> None:
        """Fires the workflows' schedules into the queue as their times pass (not the ones missed while serve
        was not running); a tick is one run however often it is sent (its id comes from its time). Nothing that
        goes wrong in one tick stops the next."""
        last = self.clock()
        while not self._stop.wait(every):
            now = self.clock()
            try:
                self._fire(last, now)
            except Exception:  # the loop is every workflow's schedules: it goes on
                log.exception("the schedules' tick failed")
            last = now

    def _fire(self, after: datetime, until: datetime) -> None:
        for tick in due(self.workflows, after, until):
            self.queue.send(tick.body(), group=f"schedule-{tick.workflow}", dedup=dedup_id(tick))
            self.tick_log.info(
                "schedule fired", extra={"workflow": tick.workflow, "schedule": tick.schedule, "at": tick.at}
            )

    def fire_now(self, workflow: str, schedule: str) -> str:
        """A schedule's tick at this second, as the clock fires one (the playground's "fire now")."""
        tick = TickMessage(workflow, schedule, self.clock().astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
        self.queue.send(tick.body(), group=f"schedule-{workflow}", dedup=dedup_id(tick))
        self.tick_log.info("schedule fired", extra={"workflow": workflow, "schedule": schedule, "at": tick.at})
        return f"tick {tick.at} queued"

    def _handle(self, worker: Worker, body: str) -> float | None:
        """One message through ``worker`` (a lane), its outcome logged with its run's id and counted. One whose
        answer Slack could not take is handed over again after a backoff (``again.py``): the seconds."""
        said, again = worker.process.log, None
        said.clear_state()
        try:
            outcome: str = worker.handle(decode(body, self.store), deadline=Deadline.none())
        except Unreachable as error:  # an outage, not a bug: one line, and the message tried again
            again = backoff(getattr(body, "received", 1), self.retry_first)
            log.warning("Slack is unreachable (%s): the message is tried again in %.0f s", error, again)
            outcome = "unreachable"
        except Exception:
            log.exception("the worker failed on a message")  # the stack trace stays in this terminal
            outcome = "error"
        said.info("message handled", extra={"outcome": outcome})  # with its run's id, if it had one
        self.outcomes.append(outcome)
        return again

    def drain(self, seconds: float) -> bool:
        """Takes no more messages and waits for the runs under way to end, at most ``seconds``, before a close:
        what a test does, whose next test must not share the process with a run left streaming to a playground
        that is gone (close alone leaves them to end by themselves, as Ctrl-C must not wait). True if they all
        have."""
        self._stop.set()
        until = time.monotonic() + seconds
        ended = [lanes.join(max(until - time.monotonic(), 0.0)) for lanes in self.lanes]
        return all(ended)

    def close(self) -> None:
        self._stop.set()
        self.http.shutdown()
        self.http.server_close()
        self.wakeups.close()
        if self.playground is not None:
            self.playground.close()
        if self.sandbox is not None:
            self.sandbox.close()


def _lane_log(number: int) -> Logger:
    """A lane's logger: a service name of its own, as Powertools keeps appended keys per logger name."""
    return Logger(service="agent-runtime-serve-worker" + (f"-{number}" if number > 1 else ""))


def _listen(host: str, port: int) -> _Server:
    """The server bound to ``host:port``; a port taken (or a host this machine does not have) is the command's
    usage, said in one line: a ConfigError, never a traceback."""
    try:
        return _Server((host, port), _Handler)
    except OSError as error:
        taken = error.errno in (errno.EADDRINUSE, errno.EACCES)  # in use, or a port below 1024 for a user
        # `make playground` passes PORT on as --port: the hint names both, whichever way serve was started
        hint = "choose another port with --port N (make playground PORT=N)" if taken else "check --host and --port"
        raise ConfigError(f"cannot listen on {host}:{port} ({error.strerror or error}): {hint}") from None


def api_gateway_event(method: str, path: str, headers: dict[str, str], body: bytes, query: str = "") -> dict[str, Any]:
    """What API Gateway (HTTP API, payload 2.0) would hand the function for this request."""
    try:
        text, encoded = body.decode("utf-8"), False
    except UnicodeDecodeError:
        text, encoded = base64.b64encode(body).decode(), True
    now = time.time()
    return {
        "version": "2.0",
        "routeKey": f"{method} {path}",
        "rawPath": path,
        "rawQueryString": query,
        "queryStringParameters": dict(urllib.parse.parse_qsl(query)) or None,
        "headers": {k.lower(): v for k, v in headers.items()},
        "requestContext": {
            "accountId": "local",
            "apiId": "local",
            "domainName": "127.0.0.1",
            "http": {"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1", "userAgent": ""},
            "requestId": uuid.uuid4().hex,
            "routeKey": f"{method} {path}",
            "stage": "$default",
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "body": text,
        "isBase64Encoded": encoded,
    }


class _RequestContext:
    """A request's stand-in for the Lambda context: API Gateway gives a request 30 s."""

    function_name = "agent-runtime-serve"
    aws_request_id = "local"

    def __init__(self) -> None:
        self._until = time.monotonic() + 30

    def get_remaining_time_in_millis(self) -> int:
        return int((self._until - time.monotonic()) * 1000)


class _Handler(BaseHTTPRequestHandler):
    """A request to ``serve``: through the webhook's routes, as API Gateway would hand it over."""

    server: _Server

    def do_POST(self) -> None:
        """Any method with its body (``Content-Length``), through the routes: the webhook's router answers a method
        a route does not take with a JSON 405 and its Allow, a path it does not have with a JSON 404."""
        try:  # "abc", "-1", "²": refused, and the connection closed (the framing of what follows is unknown)
            size = fields.number(self.headers.get("Content-Length") or "0", "Content-Length", high=10**15, status=400)
        except fields.FieldError as error:
            self.close_connection = True
            self._reply(400, json.dumps({"error": error.reason}), JSON)
            return
        limit, refusal = self._limit()
        if size > limit:
            self.close_connection = True
            self._drain(size, limit)  # a client still sending would see a reset, not the answer
            self._reply(413, json.dumps({"error": refusal}), JSON)
            return
        self._forward(self.rfile.read(size))

    def __getattr__(self, name: str) -> Any:
        """``do_GET`` (a run's page, the playground's), ``do_PUT``, ``do_HEAD``, any method's: through the routes as
        POST is, never the standard library's HTML 501 page (one JSON error shape everywhere)."""
        if name.startswith("do_"):
            return self.do_POST
        raise AttributeError(name)

    def _limit(self) -> tuple[int, str]:
        """The largest body the request's route takes, and the refusal past it: API Gateway's own limit, or the
        playground's for its routes (a message's files, base64)."""
        local, path = self.server.local, self.path.partition("?")[0]
        if local.playground is not None and (own := local.playground.body_limit(path)) is not None:
            return own
        return MAX_BODY_BYTES, f"the body is over {MAX_BODY_BYTES:,} bytes (API Gateway's limit for a request)"

    def _forward(self, body: bytes) -> None:
        """The request, as API Gateway hands it over, through the webhook's routes (the playground's its own)."""
        path, _, query = self.path.partition("?")
        try:
            status, text, headers = self._answer(path, query, body)
        except Exception:  # a bug, not the request's fault: answered (as API Gateway does), never a dropped connection
            log.exception("the webhook failed on a request")
            status, text, headers = 500, json.dumps({"error": "internal error (the traceback is in serve's log)"}), JSON
        self._reply(status, text, headers)

    def _answer(self, path: str, query: str, body: bytes) -> tuple[int, str | bytes, dict[str, str]]:
        local, headers = self.server.local, dict(self.headers.items())
        if local.playground is not None and (
            answer := local.playground.handle(self.command, path, query, headers, body)
        ):
            return answer[0], answer[2], answer[1]
        local.webhook_log.clear_state()
        result = local.webhook.handle(api_gateway_event(self.command, path, headers, body, query), _RequestContext())
        return int(result.get("statusCode", 500)), result.get("body") or "", result.get("headers") or {}

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(
            self.server.local.read_timeout
        )  # each read of the request: a silent client is let go

    def _drain(self, size: int, limit: int) -> None:
        left = min(size, max(MAX_DRAINED_BYTES, 2 * limit))
        try:
            while left > 0:
                chunk = self.rfile.read(min(left, 1 << 20))
                if not chunk:
                    return
                left -= len(chunk)
        except OSError:
            return

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """What the standard library refuses itself (a malformed request line, a header too long): in JSON, as
        every other refusal, not its HTML page."""
        self.close_connection = True
        reason = message or self.responses.get(code, ("error",))[0]
        self._reply(code, json.dumps({"error": reason}), JSON)

    def _reply(self, status: int, text: str | bytes, headers: dict[str, str]) -> None:
        payload = text.encode() if isinstance(text, str) else text
        try:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            if self.command != "HEAD":  # a HEAD's answer is its status and headers
                self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):  # the reader left (a tab closed or reloaded): nothing to say
            self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        log.info("%s %s", self.command, getattr(self, "path", ""))  # a request line refused has no path


def _kms() -> Any:
    import boto3

    return boto3.client("kms")
