"""Tracing's cost: the worker's cold import with tracing off (what the telemetry module adds to it), the import
of the SDK and exporter once an endpoint is set, and the overhead of one span (start, attributes, end, batched)."""

from __future__ import annotations

import logging
import os
import re
import statistics
import subprocess
import sys
import time

RUNS = 7


def _import_ms(env: dict[str, str], code: str) -> float:
    script = f"import time; t = time.perf_counter(); {code}; print((time.perf_counter() - t) * 1000)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def _self_ms(env: dict[str, str], module: str) -> float:
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", "import agent_runtime.service.worker"],
                          capture_output=True, text=True, env=env, check=True)  # fmt: skip
    found = re.findall(rf"import time:\s+\d+ \|\s+(\d+) \| +{re.escape(module)}$", done.stderr, re.MULTILINE)
    return int(found[0]) / 1000 if found else 0.0


def test_tracing_costs() -> None:
    off = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    on = off | {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    worker = [_import_ms(off, "import agent_runtime.service.worker") for _ in range(RUNS)]
    share = statistics.median(_self_ms(off, "agent_runtime.telemetry") for _ in range(RUNS))
    sdk = [_import_ms(on, "from agent_runtime import telemetry; telemetry.tracer()") for _ in range(RUNS)]
    from agent_runtime import telemetry

    logging.getLogger("opentelemetry").setLevel(logging.CRITICAL)  # nothing listens: its retries are expected
    os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://127.0.0.1:9"  # nothing listens: export fails quietly
    try:
        tracer = telemetry.tracer()
        times = []
        for n in range(20_000):
            started = time.perf_counter()
            span = tracer.start_span("execute_tool file_read", attributes={"gen_ai.tool.name": "file_read"})
            span.set_attribute("agent_runtime.tool.result_chars", n)
            span.end()
            times.append(time.perf_counter() - started)
    finally:
        del os.environ["OTEL_EXPORTER_OTLP_ENDPOINT"]
    print(f"\n\nTracing, medians of {RUNS} cold processes")
    print(f"  worker import, tracing off          {statistics.median(worker):7.1f} ms")
    print(f"  of which agent_runtime.telemetry   {share:7.2f} ms ({share / statistics.median(worker):.1%})")
    print(f"  SDK + OTLP exporter, tracing on    {statistics.median(sdk):7.1f} ms (once per cold start)")
    print(f"  one span (start, attribute, end)   {statistics.median(times) * 1e6:7.1f} µs")
    assert share / statistics.median(worker) <= 0.05  # tracing off leaves the cold start within 5 %
