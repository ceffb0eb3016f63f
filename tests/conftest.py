"""Shared fixtures: a scripted model served over real HTTP, workflows, agents."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import boto3
import pytest
from agent_runtime import Agent, Hook, ToolRegistry
from agent_runtime.context import ContextSettings
from agent_runtime.files import FileStore
from agent_runtime.models import OpenAIChatModel, RetryPolicy
from agent_runtime.testing import ScriptedServer, Step
from agent_runtime.workflows import Limits, ModelSettings, Workflow
from moto.server import ThreadedMotoServer

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "layers" / "runtime" / "agent_runtime"


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Tests never reach a real model, and never write state into the working tree.
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("AGENT_STATE_DIR", str(tmp_path / "state"))
    # What a warm process learned about an endpoint is keyed by its URL: a scripted server on a reused port is
    # another server, so no test inherits another's calibration.
    from agent_runtime import telemetry
    from agent_runtime.chat import pane, stream
    from agent_runtime.context import budget
    from agent_runtime.models import dialect, probe

    budget._LEARNED.clear()
    dialect.forget()
    probe.forget()
    stream.forget()
    pane.forget()
    # An earlier test's OTLP collector is gone: its exporter would go on retrying it in threads of its own, drawing
    # retry jitter from `random` while a later test's hypothesis draws (HypothesisDeprecationWarning).
    telemetry.forget()


@pytest.fixture(autouse=True)
def _own_tool_modules(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """A tools module a test wrote under its tmp folder is forgotten after it: a later test in the same worker
    writing one of the same name (``payments_tools``) imports its own, not the cached one writing to another folder."""
    before = set(sys.modules)
    yield
    base = str(tmp_path_factory.getbasetemp())
    for name in set(sys.modules) - before:
        if str(getattr(sys.modules.get(name), "__file__", None) or "").startswith(base):
            del sys.modules[name]


@pytest.fixture
def scripted() -> Iterator[Callable[..., ScriptedServer]]:
    """Start scripted servers; each must have used its whole script by the end of the test."""
    servers: list[ScriptedServer] = []

    def start(*steps: Step, **kwargs: object) -> ScriptedServer:
        server = ScriptedServer(steps, **kwargs)  # type: ignore[arg-type]
        server.__enter__()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
    for server in servers:
        server.assert_complete()


def make_workflow(
    *,
    max_tool_calls: int = 50,
    window: int = 128_000,
    prompt: str = "You help.",
    output: int = 1024,
    context: ContextSettings | None = None,
) -> Workflow:
    return Workflow(
        name="test-flow",
        description="a workflow for tests",
        prompt=prompt,
        model=ModelSettings("gpt-4o", window, output),
        limits=Limits(max_tool_calls=max_tool_calls),
        context=context or ContextSettings(),
    )


def model_for(server: ScriptedServer, *, attempts: int = 3) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-4o", client=server.client(), retry=RetryPolicy(max_attempts=attempts, base_delay=0.01))


def make_agent(
    server: ScriptedServer,
    *,
    tools: Sequence = (),
    hooks: Sequence[Hook] = (),
    files: FileStore | None = None,
    **workflow_kwargs: object,
) -> Agent:
    return Agent(
        make_workflow(**workflow_kwargs),  # type: ignore[arg-type]
        model_for(server),
        tools=ToolRegistry(tools),
        hooks=hooks,
        files=files,
    )


def _atomic_writes() -> None:
    """moto checks a write's condition, then writes, with no lock between: two threads can both pass a condition
    DynamoDB lets only one pass (a lost update in test_two_workers_on_one_thread_lose_no_update, seen once in CI).
    DynamoDB's conditional writes are atomic per item; the simulator is made so by one lock around its writes."""
    from moto.dynamodb.models import DynamoDBBackend

    lock = threading.RLock()
    for name in ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item"):
        original = getattr(DynamoDBBackend, name)
        if getattr(original, "atomic", False):
            continue

        def locked(self: Any, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            with lock:
                return _original(self, *args, **kwargs)

        locked.atomic = True  # type: ignore[attr-defined]
        setattr(DynamoDBBackend, name, locked)


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    _atomic_writes()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


FAKE_SECRET = "sk-test-THIS-MUST-NEVER-REACH-THE-SANDBOX"


@pytest.fixture(scope="session")
def sandbox() -> Iterator[object]:
    """The real local sandbox (Node + Deno + Pyodide), with a planted secret in its host's environment."""
    import os

    from agent_runtime.sandbox import LocalSandbox

    client = LocalSandbox(REPO / "functions" / "sandbox", env={**os.environ, "FAKE_SECRET": FAKE_SECRET})
    client.check()  # `make test` installs it (make sandbox); fail loudly rather than skip
    yield client
    client.close()


def moto_clients(endpoint: str, *names: str) -> dict[str, Any]:
    session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
    return {name: session.client(name, endpoint_url=endpoint) for name in names}


def create_stack(clients: dict[str, Any], name: str) -> str:
    """The table, the bucket and the FIFO run queue, as template.yaml declares them; the queue's URL."""
    create_state_table(clients["dynamodb"], name)
    clients["s3"].create_bucket(Bucket=name)
    attributes = {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    return str(clients["sqs"].create_queue(QueueName=f"{name}.fifo", Attributes=attributes)["QueueUrl"])


def create_state_table(dynamodb: object, name: str) -> None:
    """The runtime's table as template.yaml declares it: pk/sk strings, on demand."""
    dynamodb.create_table(  # type: ignore[attr-defined]
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key in ("pk", "sk")],
        BillingMode="PAY_PER_REQUEST",
    )
