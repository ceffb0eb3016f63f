"""file_regex over a 100 MB object in the S3 store (moto, server mode), against loading it whole.

Each side runs in its own process, so peak memory is that process's own. Reported: wall time, peak RSS, and
peak growth during the scan (what the scan itself needs, above the interpreter and its imports).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import boto3
from agent_runtime.stores import StoreFileStore
from agent_runtime.stores.aws import AwsStore
from moto.server import ThreadedMotoServer

SIZE_MB = 100
SCAN = textwrap.dedent(
    """
    import json, sys, time, boto3
    from agent_runtime.files.tools import file_regex
    from agent_runtime.run_context import RunContext
    from agent_runtime.stores import StoreFileStore
    from agent_runtime.stores.aws import AwsStore

    def rss(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    endpoint, file_id, mode = sys.argv[1:4]
    session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
    store = AwsStore(s3=session.client("s3", endpoint_url=endpoint),
                     dynamodb=session.client("dynamodb", endpoint_url=endpoint), bucket="bench", table="bench")
    files = StoreFileStore(store, "run#bench")
    files.meta(file_id)
    before = rss("VmRSS")
    started = time.perf_counter()
    if mode == "stream":
        out = file_regex.invoke({"id": file_id, "pattern": "NEEDLE-[0-9]+", "max_matches": 200},
                                RunContext("run-bench", "bench", files))
        hits = int(out.split(": ")[1].split(" ")[0])
    else:
        import re
        text = files.read(file_id).decode()
        hits = len(re.findall("NEEDLE-[0-9]+", text))
    print(json.dumps({"seconds": time.perf_counter() - started, "peak": rss("VmHWM"), "before": before, "hits": hits}))
    """
)


def test_file_regex_over_100_mb_in_s3() -> None:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
        s3, dynamodb = session.client("s3", endpoint_url=endpoint), session.client("dynamodb", endpoint_url=endpoint)
        s3.create_bucket(Bucket="bench")
        keys = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
        attrs = [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")]
        dynamodb.create_table(
            TableName="bench", KeySchema=keys, AttributeDefinitions=attrs, BillingMode="PAY_PER_REQUEST"
        )
        store = AwsStore(s3=s3, dynamodb=dynamodb, bucket="bench", table="bench")
        line = "2026-11-20T09:00:00Z INFO webhook.delivery customer=cust-123 status=200 latency_ms=87 ok\n"
        count = SIZE_MB * 1024 * 1024 // len(line)
        body = "".join(line if n % 10_000 else f"NEEDLE-{n} {line}" for n in range(count)).encode()
        meta = StoreFileStore(store, "run#bench").put(body, name="big.log")
        del body
        results = {mode: _measure(endpoint, meta.id, mode) for mode in ("stream", "load whole")}
    finally:
        server.stop()
    print(f"\n\nfile_regex over a {meta.size_bytes / 2**20:.0f} MB object in the S3 store (moto server, 127.0.0.1)")
    print(f"{'mode':<12} | {'seconds':>8} | {'peak RSS MB':>11} | {'growth MB':>9} | hits")
    for mode, r in results.items():
        print(f"{mode:<12} | {r['seconds']:>8.1f} | {r['peak']:>11.0f} | {r['peak'] - r['before']:>9.0f} | {r['hits']}")
    growth = results["stream"]["peak"] - results["stream"]["before"]
    print(f"scan memory target (growth <= 64 MB): {'ok' if growth <= 64 else 'MISSED'}")


def _measure(endpoint: str, file_id: str, mode: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", SCAN, endpoint, file_id, mode], capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])
