"""Fixtures the functional tests share: the system end to end (`system`), the ops workflow's tools (`ops`), the
tests' authorisation server (`auth_server`) and KMS key (`kms_key`), an OTLP collector (`receiver`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import nullcontext
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.service.setup import replies_for
from agent_runtime.service.wakeups import SchedulerWakeups
from agent_runtime.service.webhook import create_app
from agent_runtime.service.worker import Process, Worker
from agent_runtime.stores import LocalStore, Store
from agent_runtime.stores.aws import AwsStore
from agent_runtime.testing import ScriptedServer
from agent_runtime.toolsets.secrets import env_secret
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.idempotency import dynamodb_layer
from agent_runtime.triggers.queue import SqsQueue, decode
from aws_lambda_powertools import Metrics
from aws_lambda_powertools.utilities.batch import SqsFifoPartialProcessor, process_partial_response
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests.approvals_support import OPS, TOOL
from tests.conftest import REPO, create_stack, model_for, moto_clients
from tests.oauth_support import AuthServer
from tests.triggers_support import ENV, FakeContext, api_event, api_get, fake_apis, sqs_lambda_event
from tests.worker_support import WORKFLOW, System


@pytest.fixture
def system(moto_endpoint: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Callable[..., System]]:
    clients = moto_clients(moto_endpoint, "dynamodb", "sqs", "s3", "scheduler")
    name = f"e{abs(hash(request.node.name)) % 10**8}"
    url = create_stack(clients, name)
    queue_arn = clients["sqs"].get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    (tmp_path / "design-review.yaml").write_text(WORKFLOW)
    store = AwsStore(s3=clients["s3"], dynamodb=clients["dynamodb"], bucket=name, table=name)
    stack = []

    def build(
        server: ScriptedServer,
        *,
        local_store: bool = False,
        sandbox: Any = None,
        secrets: dict[str, str] | None = None,
        settings: dict[str, Any] | None = None,  # RuntimeConfig's fields: api_url, runs_channel, ...
        wrap: Callable[[Store], Store] = lambda store: store,  # the worker's store as the test sees it (a spy)
        connect: Callable[[Store, Callable[[str], str | None]], Any] | None = None,  # people's OAuth connections
    ) -> System:
        apis_cm = fake_apis()
        apis, base = apis_cm.__enter__()
        stack.append(apis_cm)
        env = {**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/", "JIRA_BASE_URL": base}
        env |= {"JIRA_EMAIL": "bot@example.com", "JIRA_API_TOKEN": "jira-token"} | (secrets or {})
        triggers = TriggerConfig.from_env(env)
        runtime = RuntimeConfig(
            workflows_dir=tmp_path,
            skills_dir=REPO / "skills",
            workflows_url="https://github.com/acme/agents/blob/main/workflows",
            **(settings or {}),
        )
        from agent_runtime.triggers.config import all_workflows

        worker_store = wrap(LocalStore(tmp_path / "state") if local_store else store)
        queue = SqsQueue(clients["sqs"], url, store=worker_store)
        secret = lambda key: triggers.secret(key) or env_secret(key)  # noqa: E731 (the integrations secret, as deployed)
        flow = connect(worker_store, secret) if connect is not None else None

        webhook = create_app(
            triggers,
            queue=queue,
            persistence=dynamodb_layer(name, client=clients["dynamodb"]),
            workflows=all_workflows(runtime),
            store=lambda: worker_store,
            connect=(lambda: flow) if flow is not None else None,
        )
        context = FakeContext()
        model = model_for(server)  # one client for every run, as the worker function keeps one
        metrics = Metrics(namespace="AgentRuntimeTest", service="worker")
        metrics.clear_metrics()
        worker = Worker(
            Process(
                runtime,
                store=worker_store,
                queue=queue,
                models=lambda wf: nullcontext(model),
                replies=replies_for(triggers),
                progress_interval=0.0,
                metrics=metrics,
                sandbox=sandbox,
                wakeups=SchedulerWakeups(clients["scheduler"], queue_arn, "arn:aws:iam::123456789012:role/wakeups"),
                secrets=secret,
                connect=flow,
            )
        )
        seen: list[dict[str, Any]] = []

        def handler(event: dict[str, Any], seconds: float = 600) -> list[str]:
            outcomes: list[str] = []

            def record_handler(record: Any, lambda_context: Any) -> str:
                from agent_runtime.deadline import Deadline

                outcome = worker.handle(decode(record.body, worker_store), deadline=Deadline.after(seconds))
                outcomes.append(outcome)
                return outcome

            result = process_partial_response(
                event=event, record_handler=record_handler, processor=SqsFifoPartialProcessor(), context=context
            )
            assert result == {"batchItemFailures": []}
            return outcomes

        def deliver(seconds: float = 600, *, batches: int = 10**6) -> list[str]:
            outcomes = []
            for _ in range(batches):
                got = clients["sqs"].receive_message(
                    QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=0, AttributeNames=["All"]
                )
                if "Messages" not in got:
                    return outcomes
                seen.extend(got["Messages"])
                outcomes += handler(sqs_lambda_event(got["Messages"]), seconds)
                for message in got["Messages"]:
                    clients["sqs"].delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
            return outcomes

        def post(path: str, body: bytes, headers: dict[str, str]) -> dict[str, Any]:
            return webhook.handle(api_event(path, body, headers), context)

        return System(
            post,
            deliver,
            apis,
            worker_store,
            worker,
            lambda: handler(sqs_lambda_event(seen)),
            base,
            metrics,
            seen,
            clients,
            url,
            lambda link: webhook.handle(api_get(link), context),
        )

    yield build
    for cm in stack:
        cm.__exit__(None, None, None)


@pytest.fixture(scope="session")
def auth_server() -> Iterator[AuthServer]:
    """A real OpenID-certified authorisation server (oidc-provider) on 127.0.0.1, for the whole session: each test
    signs in with accounts of its own."""
    server = AuthServer()
    yield server
    server.close()


@pytest.fixture
def kms_key(moto_endpoint: str) -> tuple[Any, str]:
    """The stack's KMS key (moto's KMS in server mode): its client and key id."""
    kms = moto_clients(moto_endpoint, "kms")["kms"]
    return kms, str(kms.create_key(Description="agent-runtime tokens")["KeyMetadata"]["KeyId"])


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[Any]]]:
    """An OTLP/HTTP collector on 127.0.0.1: its endpoint, and the spans exported to it (protobuf, as sent)."""
    spans: list[Any] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            request = ExportTraceServiceRequest()
            request.ParseFromString(self.rfile.read(int(self.headers["Content-Length"])))
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    spans.extend(scope.spans)
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", spans
    server.shutdown()


@pytest.fixture
def ops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    def setup(approvers: str = "") -> Path:
        (tmp_path / "ops-actions.yaml").write_text(OPS.format(approvers=approvers))
        tools = tmp_path / "tools"
        tools.mkdir(exist_ok=True)
        (tools / "ops_tools.py").write_text(TOOL)
        monkeypatch.setenv("AGENT_TOOLS_PATH", str(tools))
        monkeypatch.setenv("OPS_LOG", str(tools / "restarts.log"))
        return tools / "restarts.log"

    return setup
