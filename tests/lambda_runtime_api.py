"""A local Lambda Runtime API: the endpoints the runtime interface client (``awslambdaric``) talks to, so a built
handler runs as Lambda runs it — init once, then invocations one at a time, each with its request id and deadline in
the headers, and under SnapStart the before-snapshot hooks, a wait for the restore, the after-restore hooks.

https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html (HTTP/1.1 with keep-alive, as the RIC's C client
expects: an HTTP/1.0 answer leaves it waiting).
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PREFIX = "/2018-06-01/runtime"
FUNCTION_ARN = "arn:aws:lambda:us-east-1:123456789012:function:agent-runtime-test:live"


@dataclass
class Result:
    request_id: str
    ok: bool
    body: Any
    error_type: str = ""


@dataclass
class RuntimeApi:
    """Invocations are queued with :meth:`invoke`; ``log`` is every call the client made, in order."""

    log: list[str] = field(default_factory=list)
    init_errors: list[dict[str, Any]] = field(default_factory=list)
    _pending: queue.Queue[tuple[str, bytes, int]] = field(default_factory=queue.Queue)
    _results: dict[str, queue.Queue[Result]] = field(default_factory=dict)
    _restored: threading.Event = field(default_factory=threading.Event)
    snapshot_taken: threading.Event = field(default_factory=threading.Event)
    address: str = ""
    process: subprocess.Popen[str] | None = None  # the function's, once started: an exit fails the wait at once

    def invoke(self, event: Any, *, deadline_in: float = 60, timeout: float = 120) -> Result:
        """One invocation: the event, a deadline ``deadline_in`` seconds from now; waits for its result."""
        request_id = str(uuid.uuid4())
        self._results[request_id] = queue.Queue()
        self._pending.put((request_id, json.dumps(event).encode(), int((time.time() + deadline_in) * 1000)))
        ends = time.monotonic() + timeout
        while time.monotonic() < ends:
            try:
                return self._results[request_id].get(timeout=0.2)
            except queue.Empty:
                if self.process is not None and self.process.poll() is not None:
                    raise RuntimeError(f"the function's process exited ({self.process.returncode})") from None
        raise TimeoutError(f"no result for {request_id} within {timeout} s")

    def restore(self) -> None:
        """Let a SnapStart init go on past its snapshot (the after-restore hooks run next)."""
        self._restored.set()

    # The server side, called on its threads.
    def next_invocation(self) -> tuple[str, bytes, int]:
        return self._pending.get()

    def finish(self, request_id: str, result: Result) -> None:
        self._results[request_id].put(result)


@contextmanager
def runtime_api() -> Iterator[RuntimeApi]:
    api = RuntimeApi()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(api))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    api.address = f"127.0.0.1:{server.server_address[1]}"
    try:
        yield api
    finally:
        server.shutdown()
        server.server_close()


def _handler(api: RuntimeApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the log list says what happened
            pass

        def do_GET(self) -> None:
            api.log.append(f"GET {self.path.removeprefix(PREFIX)}")
            if self.path == f"{PREFIX}/invocation/next":
                request_id, body, deadline_ms = api.next_invocation()
                headers = {
                    "Lambda-Runtime-Aws-Request-Id": request_id,
                    "Lambda-Runtime-Deadline-Ms": str(deadline_ms),
                    "Lambda-Runtime-Invoked-Function-Arn": FUNCTION_ARN,
                    "Lambda-Runtime-Trace-Id": f"Root=1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]};Sampled=0",
                    "Content-Type": "application/json",
                }
                self._send(200, body, headers)
            elif self.path == f"{PREFIX}/restore/next":
                api.snapshot_taken.set()
                api._restored.wait()
                self._send(200, b"", {})
            else:
                self._send(404, b'{"errorMessage": "no such route"}', {})

        def do_POST(self) -> None:
            path = self.path.removeprefix(PREFIX)
            api.log.append(f"POST {path}")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            parts = path.strip("/").split("/")
            error_type = self.headers.get("Lambda-Runtime-Function-Error-Type", "")
            if parts[0] == "invocation" and len(parts) == 3 and parts[2] in ("response", "error"):
                result = Result(parts[1], parts[2] == "response", json.loads(body or b"null"), error_type)
                api.finish(parts[1], result)
            elif parts[0] in ("init", "restore"):
                api.init_errors.append({"phase": parts[0], "type": error_type, "body": json.loads(body or b"null")})
            self._send(202, b'{"status": "OK"}', {})

        def _send(self, status: int, body: bytes, headers: dict[str, str]) -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
