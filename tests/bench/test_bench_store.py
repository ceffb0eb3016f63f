"""file_regex over a 100 MB file: the local store and the S3 store (moto, server mode), next to the floors.

Side by side, each in its own process (peak memory is that process's own), median of RUNS:
* local   — file_regex on the local directory store; target <= 1 s and <= 64 MB growth;
* grep -c — GNU grep counting the same matches in the same file: the reference;
* s3      — file_regex on the S3 store (4 MB range reads);
* s3 raw  — reading the same object with get_object, nothing else: the transfer floor.
"""

from __future__ import annotations

import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import boto3
from agent_runtime.stores import LocalStore, StoreFileStore
from agent_runtime.stores.aws import AwsStore
from moto.server import ThreadedMotoServer

SIZE_MB = 100
RUNS = 3
PATTERN = "NEEDLE-[0-9]+"
SCAN = textwrap.dedent(
    """
    import json, sys, time, boto3
    from agent_runtime.files.tools import file_regex
    from agent_runtime.run_context import RunContext
    from agent_runtime.stores import LocalStore, StoreFileStore
    from agent_runtime.stores.aws import AwsStore

    def rss(field):
        for line in open("/proc/self/status"):
            if line.startswith(field):
                return int(line.split()[1]) / 1024
    where, file_id, mode = sys.argv[1:4]
    if mode == "local":
        from pathlib import Path
        store = LocalStore(Path(where))
    else:
        session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
        s3 = session.client("s3", endpoint_url=where)
        store = AwsStore(s3=s3, dynamodb=session.client("dynamodb", endpoint_url=where), bucket="bench",
                         table="bench")
    files = StoreFileStore(store, "run#bench")
    files.meta(file_id)
    before = rss("VmRSS")
    started = time.perf_counter()
    if mode == "s3 raw":
        body = s3.get_object(Bucket="bench", Key=store._key("run#bench", "file#" + file_id))["Body"]
        hits = sum(len(chunk) for chunk in iter(lambda: body.read(4 << 20), b""))  # bytes, not hits
    else:
        out = file_regex.invoke({"id": file_id, "pattern": "NEEDLE-[0-9]+", "max_matches": 200},
                                RunContext("run-bench", "bench", files))
        hits = int(out.split(": ")[1].split(" ")[0])
    print(json.dumps({"seconds": time.perf_counter() - started, "peak": rss("VmHWM"), "before": before, "hits": hits}))
    """
)


def test_file_regex_over_100_mb_local_and_s3() -> None:
    line = "2026-11-20T09:00:00Z INFO webhook.delivery customer=cust-123 status=200 latency_ms=87 ok\n"
    count = SIZE_MB * 1024 * 1024 // len(line)
    body = "".join(line if n % 10_000 else f"NEEDLE-{n} {line}" for n in range(count)).encode()
    folder = Path(tempfile.mkdtemp(prefix="bench-regex-"))
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        local = StoreFileStore(LocalStore(folder), "run#bench").put(body, name="big.log")
        endpoint = _s3_with(body, server)
        (folder / "big.log").write_bytes(body)
        del body
        results = {
            "local": _runs(str(folder), local.id, "local"),
            "grep -c": _grep(folder / "big.log"),
            "s3": _runs(endpoint, local.id, "s3"),
            "s3 raw": _runs(endpoint, local.id, "s3 raw"),
        }
    finally:
        server.stop()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"\n\nfile_regex /{PATTERN}/ over a {local.size_bytes / 2**20:.0f} MB file, median of {RUNS} runs")
    print(f"{'mode':<8} | {'seconds':>8} | {'peak RSS MB':>11} | {'growth MB':>9} | matches (s3 raw: bytes)")
    for mode, r in results.items():
        print(f"{mode:<8} | {r['seconds']:>8.2f} | {r['peak']:>11.0f} | {r['peak'] - r['before']:>9.0f} | {r['hits']}")
    fast, floor = results["local"], results["s3 raw"]
    print(f"local vs grep -c: {fast['seconds'] / results['grep -c']['seconds']:.1f}x; "
          f"s3 vs the transfer floor: {results['s3']['seconds'] / floor['seconds']:.2f}x")  # fmt: skip
    assert fast["hits"] == results["grep -c"]["hits"] == results["s3"]["hits"]
    assert fast["seconds"] <= 1.0, f"local scan {fast['seconds']:.2f} s over the 1 s target"
    assert fast["peak"] - fast["before"] <= 64, "local scan grew by more than 64 MB"


def _s3_with(body: bytes, server: ThreadedMotoServer) -> str:
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
    s3, dynamodb = session.client("s3", endpoint_url=endpoint), session.client("dynamodb", endpoint_url=endpoint)
    s3.create_bucket(Bucket="bench")
    keys = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
    attrs = [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk")]
    dynamodb.create_table(TableName="bench", KeySchema=keys, AttributeDefinitions=attrs, BillingMode="PAY_PER_REQUEST")
    StoreFileStore(AwsStore(s3=s3, dynamodb=dynamodb, bucket="bench", table="bench"), "run#bench").put(
        body, name="big.log"
    )
    return endpoint


def _runs(where: str, file_id: str, mode: str) -> dict[str, float]:
    rows = []
    for _ in range(RUNS):
        done = subprocess.run([sys.executable, "-c", SCAN, where, file_id, mode], capture_output=True, text=True,
                              timeout=600, check=True)  # fmt: skip
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return {key: statistics.median(r[key] for r in rows) for key in rows[0]}


def _grep(path: Path) -> dict[str, float]:
    times, hits = [], 0
    for _ in range(RUNS):
        started = time.perf_counter()
        done = subprocess.run(["grep", "-cE", PATTERN, str(path)], capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - started)
        hits = int(done.stdout.strip())
    return {"seconds": statistics.median(times), "peak": 0.0, "before": 0.0, "hits": hits}
