"""Webhook ack latency (p50/p99, on moto) and cold import time of the webhook and worker handlers.

Side by side in one run: the webhook's full path (verify, deduplicate, route, enqueue) against a bare Powertools
route that answers 200 at once; each handler's import (module init, clients included) against importing boto3
alone, the floor for any handler that talks to AWS.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import boto3
from agent_runtime.triggers.config import TriggerConfig
from agent_runtime.triggers.idempotency import dynamodb_layer
from agent_runtime.triggers.queue import SqsQueue
from agent_runtime.triggers.webhook import create_app
from aws_lambda_powertools.event_handler import APIGatewayHttpResolver, Response
from moto.server import ThreadedMotoServer

from tests.functional.test_webhook import ENV, workflows
from tests.triggers_support import FakeContext, api_event, slack_mention, slack_request

REPO = Path(__file__).resolve().parents[2]
RUNS = 7
REQUESTS = 400
HANDLER_ENV = {
    "AGENT_TABLE": "t",
    "AGENT_BUCKET": "b",
    "AGENT_QUEUE_URL": "https://sqs.us-east-1.amazonaws.com/123456789012/q.fifo",
    "AWS_DEFAULT_REGION": "us-east-1",
    "AWS_ACCESS_KEY_ID": "x",
    "AWS_SECRET_ACCESS_KEY": "y",
    "AGENT_SANDBOX": "off",
}


def import_ms(code: str, cwd: Path) -> float:
    script = f"import time; t = time.perf_counter(); {code}; print((time.perf_counter() - t) * 1000)"
    env = {**os.environ, **HANDLER_ENV, "PYTHONPATH": str(cwd)}
    out = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def test_handler_cold_imports() -> None:
    rows = {}
    for name in ("webhook", "worker"):
        ours = [import_ms("import app", REPO / "functions" / name) for _ in range(RUNS)]
        floor = [import_ms("import boto3; boto3.client('sqs')", REPO) for _ in range(RUNS)]
        rows[name] = (statistics.median(ours), statistics.median(floor))
    print("\n\nHandler cold import (module init incl. clients), medians of", RUNS)
    print(f"{'handler':<8} | {'ours ms':>8} | {'boto3 + client ms':>17} | {'ratio':>6} | target")
    for name, target in (("webhook", 150), ("worker", 300)):
        ours, floor = rows[name]
        verdict = "ok" if ours <= target else "MISSED"
        print(f"{name:<8} | {ours:>8.0f} | {floor:>17.0f} | {ours / floor:>5.2f}x | <= {target} ms {verdict}")


def test_webhook_ack_latency() -> None:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
        ddb = session.client("dynamodb", endpoint_url=f"http://{host}:{port}")
        sqs = session.client("sqs", endpoint_url=f"http://{host}:{port}")
        keys = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
        attrs = [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")]
        ddb.create_table(TableName="b", KeySchema=keys, AttributeDefinitions=attrs, BillingMode="PAY_PER_REQUEST")
        url = sqs.create_queue(QueueName="b.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
        app = create_app(
            TriggerConfig.from_env(ENV),
            queue=SqsQueue(sqs, url),
            persistence=dynamodb_layer("b", client=ddb),
            workflows=workflows(),
        )
        context = FakeContext()
        app.idempotency_config.register_lambda_context(context)
        bare = APIGatewayHttpResolver()
        bare.post("/slack/events")(lambda: Response(200, "application/json", '{"ok": true}'))
        ours, baseline = [], []
        for n in range(REQUESTS):
            event = api_event("/slack/events", *slack_request(slack_mention(f"EvB{n}", ts=f"1.{n}")))
            started = time.perf_counter()
            assert app.resolve(event, context)["statusCode"] == 200
            ours.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            bare.resolve(event, context)
            baseline.append((time.perf_counter() - started) * 1000)
    finally:
        server.stop()
    print(f"\n\nWebhook ack latency over {REQUESTS} signed Slack events (moto server on 127.0.0.1)")
    print(f"{'':<32} | {'p50 ms':>7} | {'p99 ms':>7}")
    print(f"{'ours (verify, dedup, enqueue)':<32} | {percentile(ours, 0.5):>7.1f} | {percentile(ours, 0.99):>7.1f}")
    print(f"{'bare Powertools route':<32} | {percentile(baseline, 0.5):>7.2f} | {percentile(baseline, 0.99):>7.2f}")
    verdict = "ok" if percentile(ours, 0.99) <= 100 else "MISSED"
    print(f"target p99 <= 100 ms: {verdict}")
