"""The built handlers run as Lambda runs them: the AWS runtime interface client (``awslambdaric``, what Lambda's
Python runtime uses) on Lambda's Python version, against a local Runtime API, with only the `sam build` output on
the path. Init once, several invocations, each deadline taken from the Runtime API's headers; under SnapStart the
client's own before-snapshot / restore / after-restore sequence. AWS is moto (server mode), the model a scripted
OpenAI-compatible server.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.steps import reply

from tests.artifacts_support import BUILD, LAMBDA_PYTHON, LAMBDA_VERSION, layout
from tests.conftest import REPO, create_stack, moto_clients
from tests.lambda_runtime_api import RuntimeApi, runtime_api
from tests.triggers_support import SLACK_SECRET, api_event, slack_mention, slack_request, sqs_lambda_event

RIC = Path(os.environ.get("AGENT_LAMBDA_RIC") or REPO / ".venv" / f"lambda-ric-{LAMBDA_VERSION}").resolve()
if not (RIC / "awslambdaric").is_dir():
    if os.environ.get("AGENT_REQUIRE_BUILD"):
        raise RuntimeError(f"no runtime interface client in {RIC}: `make test` installs it")
    pytest.skip(f"no runtime interface client in {RIC} (`make test` installs it)", allow_module_level=True)

Started = Callable[..., tuple[RuntimeApi, subprocess.Popen[str]]]


@pytest.fixture
def aws(moto_endpoint: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    """A table, a bucket, a FIFO queue and the two secrets, as the stack makes them."""
    clients = moto_clients(moto_endpoint, "dynamodb", "s3", "sqs", "secretsmanager")
    name = f"ric{abs(hash(request.node.name)) % 10**8}"
    queue = create_stack(clients, name)
    integrations = json.dumps({"slack_signing_secret": SLACK_SECRET})
    clients["secretsmanager"].create_secret(Name=f"{name}/integrations", SecretString=integrations)
    clients["secretsmanager"].create_secret(Name=f"{name}/openai", SecretString="sk-at-deploy")
    env = {
        "AWS_ENDPOINT_URL": moto_endpoint,
        "AGENT_TABLE": name,
        "AGENT_BUCKET": name,
        "AGENT_QUEUE_URL": queue,
        "AGENT_SECRETS_NAME": f"{name}/integrations",
        "AGENT_OPENAI_SECRET_NAME": f"{name}/openai",
    }
    return {"clients": clients, "env": env, "name": name, "queue": queue}


@pytest.fixture
def start(aws: dict[str, Any]) -> Iterator[Started]:
    """Start a built function under the runtime interface client; stopped (and its output shown) at the end."""
    running: list[tuple[subprocess.Popen[str], Any]] = []

    def run(function: str, extra: dict[str, str] | None = None) -> tuple[RuntimeApi, subprocess.Popen[str]]:
        context = runtime_api()
        api = context.__enter__()
        process = subprocess.Popen(
            [str(LAMBDA_PYTHON), "-m", "awslambdaric", "app.lambda_handler"],
            cwd=BUILD / function,
            env=lambda_env(function, api, {**aws["env"], **(extra or {})}),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        api.process = process
        running.append((process, context))
        return api, process

    yield run
    for process, context in running:
        process.kill()
        output = process.communicate(timeout=10)[0]
        print(output[-4000:])
        context.__exit__(None, None, None)


def lambda_env(function: str, api: RuntimeApi, extra: dict[str, str]) -> dict[str, str]:
    """What Lambda's python runtime sets: the task root first on the path, then the layers, then the runtime."""
    content = BUILD / "ContentLayer"
    return {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": os.pathsep.join([*layout(function), str(RIC)]),
        "PYTHONDONTWRITEBYTECODE": "1",  # /var/task and /opt are read-only
        "AWS_LAMBDA_RUNTIME_API": api.address,
        "AWS_EXECUTION_ENV": f"AWS_Lambda_python{LAMBDA_VERSION}",
        "AWS_LAMBDA_FUNCTION_NAME": function,
        "AWS_LAMBDA_FUNCTION_VERSION": "1",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
        "LAMBDA_TASK_ROOT": str(BUILD / function),
        "_HANDLER": "app.lambda_handler",
        "AWS_REGION": "us-east-1",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "t",
        "AWS_SECRET_ACCESS_KEY": "t",
        "AGENT_WORKFLOWS_DIR": str(content / "workflows"),
        "AGENT_SKILLS_DIR": str(content / "skills"),
        "AGENT_SANDBOX": "off",
        **extra,
    }


@pytest.mark.parametrize("init", ["on-demand", "snap-start"])
def test_the_webhook_initialises_once_and_answers_several_invocations(
    start: Started, aws: dict[str, Any], init: str
) -> None:
    api, process = start("WebhookFunction", {"AWS_LAMBDA_INITIALIZATION_TYPE": init})
    if init == "snap-start":
        assert api.snapshot_taken.wait(60), "init and the before-snapshot hooks did not finish"
        api.restore()
    challenge, headers = slack_request({"type": "url_verification", "challenge": "through-the-ric"})
    verified = api.invoke(api_event("/slack/events", challenge, headers))
    forged = api.invoke(api_event("/slack/events", *slack_request(slack_mention("Ev02"), secret="wrong")))
    accepted = api.invoke(api_event("/slack/events", *slack_request(slack_mention("Ev03"))))
    assert (verified.ok, verified.body["statusCode"], verified.body["body"]) == (True, 200, "through-the-ric")
    assert (forged.ok, forged.body["statusCode"]) == (True, 401)
    assert (accepted.ok, accepted.body["statusCode"]) == (True, 200)
    queued = aws["clients"]["sqs"].receive_message(QueueUrl=aws["queue"], MaxNumberOfMessages=10)["Messages"]
    assert [json.loads(m["Body"])["event"]["dedup_key"] for m in queued] == ["slack:Ev03"]
    assert process.poll() is None and api.init_errors == []
    assert wait_for(lambda: api.log.count("GET /invocation/next") == 4)  # one init; the fourth call waits for more
    restored = ["GET /restore/next"] if init == "snap-start" else []
    assert [line.split()[0] for line in api.log[len(restored) :]] == ["GET", "POST"] * 3 + ["GET"]
    assert api.log[: len(restored)] == restored


def wait_for(condition: Callable[[], bool], seconds: float = 10) -> bool:
    ends = time.monotonic() + seconds
    while not condition() and time.monotonic() < ends:
        time.sleep(0.05)
    return condition()


def run_message(key: str) -> dict[str, Any]:
    """A queue message as the webhook sends it for a run started by name (/runs): no chat surface to answer."""
    event = {
        "source": "api", "kind": "run", "dedup_key": f"api:{key}", "text": "Summarise the handbook's on-call rules.",
        "user": "ops", "thread_id": f"api-{key}", "correlation_id": key, "reply_to": {}, "attributes": {},
        "workflow": "document-feedback",
    }  # fmt: skip
    return {"type": "event", "event": event}


def sqs_event(*bodies: dict[str, Any]) -> dict[str, Any]:
    messages = [
        {"MessageId": f"m{i}", "ReceiptHandle": f"r{i}", "Body": json.dumps(body), "MD5OfBody": "x"}
        for i, body in enumerate(bodies)
    ]
    return sqs_lambda_event(messages)


def test_the_worker_under_snapstart_fetches_secrets_after_restore_and_takes_deadlines_from_the_headers(
    start: Started, aws: dict[str, Any]
) -> None:
    with ScriptedServer([reply("On-call rules: page within 5 minutes."), reply("Second run done.")]) as server:
        extra = {"OPENAI_BASE_URL": server.base_url, "AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start"}
        api, process = start("WorkerFunction", extra)
        assert api.snapshot_taken.wait(60), "init and the before-snapshot hooks did not finish"
        # The snapshot may be restored long after it was taken: a secret rotated meanwhile must be the one used.
        secrets = aws["clients"]["secretsmanager"]
        secrets.put_secret_value(SecretId=f"{aws['name']}/openai", SecretString="sk-rotated-after-snapshot")
        api.restore()
        answered = api.invoke(sqs_event(run_message("first")), deadline_in=120)
        assert (answered.ok, answered.body) == (True, {"batchItemFailures": []})
        assert server.requests[0].headers["authorization"] == "Bearer sk-rotated-after-snapshot"
        # 5 s left is inside the worker's 30 s margin: the run checkpoints and continues through the queue.
        suspended = api.invoke(sqs_event(run_message("second")), deadline_in=5)
        assert (suspended.ok, suspended.body) == (True, {"batchItemFailures": []})
        assert len(server.requests) == 1
        sqs = aws["clients"]["sqs"]
        [continuation] = sqs.receive_message(QueueUrl=aws["queue"], MaxNumberOfMessages=10)["Messages"]
        assert json.loads(continuation["Body"])["type"] == "continue"
        resumed = api.invoke(sqs_event(json.loads(continuation["Body"])), deadline_in=120)
        assert (resumed.ok, resumed.body) == (True, {"batchItemFailures": []})
        assert len(server.requests) == 2
    assert api.log[:2] == ["GET /restore/next", "GET /invocation/next"] and api.init_errors == []
    assert process.poll() is None


RESTORES = """
import gc, json, random, sys
import app  # init, as Lambda runs it before taking the snapshot
from agent_runtime import snapstart
from agent_runtime.models import RetryPolicy
from agent_runtime.record import new_run_id
from agent_runtime.service.setup import shared_client

def found(markers):
    # Every string reachable from any object the collector knows (module globals, objects' attributes, caches,
    # untracked dicts and tuples through their owners), and the environment
    hits = {m for m in markers for v in __import__("os").environ.values() if m in v}
    stack, visited, keep = gc.get_objects(), set(), []
    mine = {id(markers), id(hits), id(stack), id(visited), id(keep)}
    while stack:
        obj = stack.pop()
        if id(obj) in visited or id(obj) in mine:
            continue
        visited.add(id(obj))
        keep.append(obj)  # an id stays unique while its object lives
        text = obj.decode("latin-1") if isinstance(obj, (bytes, bytearray)) else obj
        if isinstance(text, str):
            hits.update(m for m in markers if m in text)
        else:
            stack.extend(gc.get_referents(obj))
    return sorted(hits)

markers = [m[::-1] for m in sys.argv[1:]]  # given reversed: the command line is in memory too
del sys.argv[1:]
snapstart.run_before_snapshot()
in_snapshot = found(markers)
primed_tool = "lookup_tools" in sys.modules
app.store.s3.list_buckets()  # a pooled connection, as if init had made a call: dead after a restore
memory = random.getstate()  # every environment restored from the snapshot starts from this
restores, clients = [], []
for _ in range(2):
    random.setstate(memory)
    unseeded = RetryPolicy().delay(1, None)
    random.setstate(memory)
    snapstart.run_after_restore()
    clients.append(shared_client())
    restores.append({
        "unseeded_jitter": unseeded, "jitter": RetryPolicy().delay(1, None), "run_id": new_run_id(),
        "key": clients[-1].api_key, "s3_pools": len(app.store.s3._endpoint.http_session._manager.pools),
        "slack_token": app.worker.process.replies.slack.client.token if app.worker.process.replies.slack else None,
    })
print(json.dumps({"in_snapshot": in_snapshot, "after_restore": found(markers), "restores": restores,
                  "fresh_clients": clients[0] is not clients[1], "primed_tool": primed_tool}))
"""


WITH_TOOLS = """\
name: with-tools
description: Looks things up.
prompt: You look things up.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
tools:
  python: [lookup_tools:lookup]
"""
TOOL = '''
from agent_runtime import tool

@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return key
'''


def test_restored_environments_hold_no_secret_from_the_snapshot_and_differ_where_they_must(
    aws: dict[str, Any], tmp_path: Path
) -> None:
    """Two environments restored from one snapshot: the before-snapshot hooks primed it without reading a secret
    (workflows, their Python tools; a broken workflow does not fail the snapshot), and each restore gets its own
    random state, run ids, fresh secrets, an ``openai`` client and empty pools."""
    workflows, tools = tmp_path / "workflows", tmp_path / "tools"
    shutil.copytree(BUILD / "ContentLayer" / "workflows", workflows)
    (workflows / "with-tools.yaml").write_text(WITH_TOOLS)
    (workflows / "broken.yaml").write_text("name: broken\nmodel: [not, a, mapping]\n")
    tools.mkdir()
    (tools / "lookup_tools.py").write_text(TOOL)
    key, token = "sk-canary-0f3b9c1e", "xoxb-canary-77d2a1"
    secrets = aws["clients"]["secretsmanager"]
    secrets.put_secret_value(SecretId=f"{aws['name']}/openai", SecretString=key)
    integrations = {"slack_signing_secret": SLACK_SECRET, "slack_bot_token": token}
    secrets.put_secret_value(SecretId=f"{aws['name']}/integrations", SecretString=json.dumps(integrations))
    extra = {"AWS_LAMBDA_INITIALIZATION_TYPE": "snap-start", "AGENT_WORKFLOWS_DIR": str(workflows)}
    env = lambda_env("WorkerFunction", RuntimeApi(), {**aws["env"], **extra, "AGENT_TOOLS_PATH": str(tools)})
    out = subprocess.run(
        [str(LAMBDA_PYTHON), "-c", RESTORES, *(secret[::-1] for secret in (key, token, SLACK_SECRET))],
        cwd=BUILD / "WorkerFunction",
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["in_snapshot"] == []
    assert result["after_restore"] == sorted([key, token, SLACK_SECRET])  # the scan does find them once loaded
    first, second = result["restores"]
    assert first["unseeded_jitter"] == second["unseeded_jitter"]  # what a restore without the hooks would draw
    assert first["jitter"] != second["jitter"]
    assert first["run_id"] != second["run_id"]
    assert (first["key"], first["slack_token"], first["s3_pools"]) == (key, token, 0)
    assert (second["key"], second["slack_token"], second["s3_pools"]) == (key, token, 0)
    assert result["fresh_clients"]
    assert result["primed_tool"]
    assert '"message":"workflow not primed"' in out.stdout and '"workflow":"broken"' in out.stdout
