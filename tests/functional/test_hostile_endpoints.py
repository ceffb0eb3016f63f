"""Hostile endpoints (issue 41, points 1-2): a stream without end, one SSE line that never ends, a 200 whose HTML
body is hundreds of MB, a proxy that sends only keep-alive comments. Each run is a child process under the worker's
1 GiB address-space budget (RLIMIT_AS), through the real ``openai`` client over HTTP to a server on 127.0.0.1 that
stops by itself (when the client goes away, or after 60 s). Each ends in a failed run with its record stored and a
reason that says what happened — never a MemoryError, never a hang."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.http_support import loopback

LIMIT = 1 << 30
SERVER_SECONDS = 60.0  # a hostile server gives up by itself
CHUNK = {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "gpt-4.1",
         "choices": [{"index": 0, "delta": {"content": "x" * 200}, "finish_reason": None}]}  # fmt: skip

Writer = Callable[[BaseHTTPRequestHandler], None]


def endless_stream(handler: BaseHTTPRequestHandler) -> None:
    start(handler, "text/event-stream")
    line = b"data: " + json.dumps(CHUNK).encode() + b"\n\n"
    send(handler, lambda: line * 100)


def endless_line(handler: BaseHTTPRequestHandler) -> None:
    start(handler, "text/event-stream")
    handler.wfile.write(b"data: ")
    send(handler, lambda: b"x" * 65536)


def huge_html(handler: BaseHTTPRequestHandler) -> None:
    start(handler, "text/html")
    send(handler, lambda: b"<p>" + b"error page " * 6000 + b"</p>\n")


def keep_alive_only(handler: BaseHTTPRequestHandler) -> None:
    start(handler, "text/event-stream")
    send(handler, lambda: b": keep-alive\n\n", pause=0.2)


def start(handler: BaseHTTPRequestHandler, kind: str) -> None:
    handler.rfile.read(int(handler.headers.get("Content-Length") or 0))
    handler.send_response(200)
    handler.send_header("content-type", kind)
    handler.end_headers()


def send(handler: BaseHTTPRequestHandler, piece: Callable[[], bytes], pause: float = 0.0) -> None:
    until = time.monotonic() + SERVER_SECONDS
    try:
        while time.monotonic() < until:
            handler.wfile.write(piece())
            handler.wfile.flush()
            if pause:
                time.sleep(pause)
    except OSError:  # the client went away: stop
        return


@contextmanager
def hostile(writer: Writer) -> Iterator[str]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            writer(self)

        def do_GET(self) -> None:
            self.send_response(404)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    with loopback(Handler) as root:
        yield f"{root}/v1"


RUN = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
import openai
from agent_runtime import Services, build_agent
from agent_runtime.models import OpenAIChatModel
from agent_runtime.models.retry import RetryPolicy
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.workflows import parse_workflow
workflow = parse_workflow({{"name": "w", "description": "d", "prompt": "p",
                           "model": {{"name": "gpt-4.1", "context_window": 128000, "max_output_tokens": 4096}}}},
                          file="w.yaml")
client = openai.OpenAI(base_url={url!r}, api_key="x", max_retries=0)
model = OpenAIChatModel("gpt-4.1", client=client, retry=RetryPolicy(max_attempts=2, base_delay=0.01), timeout={idle})
runs = RunStore(LocalStore(__import__("pathlib").Path({state!r})))
record = build_agent(workflow, model, Services(runs=runs)).run("hi")
stored = runs.load_record(record.run_id)
print(json.dumps({{"status": str(record.status), "reason": record.stop_reason, "stored": stored is not None,
                  "calls": len(record.model_calls)}}))
"""


def run_against(url: str, state: Path, idle: float = 30.0) -> tuple[dict[str, object], float]:
    started = time.monotonic()
    script = RUN.format(limit=LIMIT, url=url, state=str(state), idle=idle)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-1500:]
    return json.loads(done.stdout.strip().splitlines()[-1]), time.monotonic() - started


@pytest.mark.parametrize(
    ("writer", "said"),
    [
        (endless_stream, "the streamed reply passed"),
        (endless_line, "a line of the streamed reply passed"),
        (huge_html, "the reply body passed"),
    ],
)
def test_an_endless_reply_is_a_model_error_within_the_memory_budget(writer: Writer, said: str, tmp_path: Path) -> None:
    """Was: 2 GiB in 4-6 s (MemoryError, no run record); 0.9-1.4 GB for one endless line; ~900 MB for the page."""
    with hostile(writer) as url:
        outcome, _ = run_against(url, tmp_path / "state")
    assert outcome["status"] == "failed" and outcome["stored"] is True
    assert said in str(outcome["reason"]) and "MemoryError" not in str(outcome["reason"])
    assert "after 1 attempt(s)" in str(outcome["reason"])  # not retried: the endpoint would do it again


def test_keep_alive_comments_do_not_keep_a_silent_call_alive(tmp_path: Path) -> None:
    """Was: never timed out (the socket's timeout is reset by every byte); with no deadline the run hung."""
    with hostile(keep_alive_only) as url:
        outcome, seconds = run_against(url, tmp_path / "state", idle=1.5)
    assert outcome["status"] == "failed" and outcome["stored"] is True
    assert "no reply for 2s" in str(outcome["reason"])  # the idle timeout (1.5 s), said as the client says it
    assert seconds < 20  # two attempts of 1.5 s of comments, not SERVER_SECONDS
