"""The sandbox on this machine: one long-lived ``node functions/sandbox/local.mjs`` per client.

It runs the same code as the Lambda function (each request still gets a fresh Deno child), so local runs and tests
exercise the real boundary. The process is started on first use and restarted if it dies.
"""

from __future__ import annotations

import collections
import itertools
import json
import queue
import shutil
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from .client import SandboxClient
from .exceptions import SandboxError, SandboxUnavailableError


class LocalSandbox(SandboxClient):
    def __init__(self, directory: Path, *, node: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.directory = Path(directory)
        self.env = dict(env) if env is not None else None  # the Node process's environment (default: inherited)
        self.node = node or shutil.which("node") or "node"
        self._process: subprocess.Popen[bytes] | None = None
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self._stderr: collections.deque[str] = collections.deque(maxlen=20)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()  # one request at a time per process: replies come back in order

    def check(self) -> None:
        """Raise :class:`SandboxUnavailableError` with the fix when the sandbox cannot start here."""
        if shutil.which(self.node) is None:
            raise SandboxUnavailableError("the python tool needs Node.js 20+ on PATH (or set AGENT_SANDBOX=off)")
        if not (self.directory / "local.mjs").is_file():
            raise SandboxUnavailableError(f"no sandbox at {self.directory} (set AGENT_SANDBOX_DIR)")
        if not (self.directory / "node_modules" / "pyodide").is_dir():
            raise SandboxUnavailableError(
                f"the sandbox's packages are not installed: run `make sandbox` (npm ci in {self.directory})"
            )

    def _start(self) -> subprocess.Popen[bytes]:
        self.check()
        process = subprocess.Popen(
            [self.node, "local.mjs"],
            cwd=self.directory,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self.env,
        )
        self._lines = queue.Queue()
        threading.Thread(target=_pump, args=(process.stdout, self._lines.put), daemon=True).start()
        threading.Thread(target=_pump, args=(process.stderr, self._note), daemon=True).start()
        return process

    def _note(self, line: bytes | None) -> None:
        if line:
            self._stderr.append(line.decode("utf-8", "replace").rstrip())

    def _invoke(self, event: dict[str, Any], timeout: float) -> Any:
        with self._lock:
            if self._process is None or self._process.poll() is not None:
                self._process = self._start()
            request_id = next(self._ids)
            assert self._process.stdin is not None
            try:
                self._process.stdin.write(json.dumps({"id": request_id, "event": event}).encode() + b"\n")
                self._process.stdin.flush()
            except (OSError, ValueError) as error:  # ValueError: closed under it (serve stopping)
                self._reset()
                raise SandboxError(f"the local sandbox is not accepting requests: {error}; {self._tail()}") from None
            return self._reply(request_id, timeout)

    def _reply(self, request_id: int, timeout: float) -> Any:
        while True:
            try:
                line = self._lines.get(timeout=timeout)
            except queue.Empty:
                self._reset()
                raise SandboxError(f"the local sandbox did not answer within {timeout:.0f} s") from None
            if line is None:
                self._reset()
                raise SandboxError(f"the local sandbox stopped: {self._tail()}")
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not ours (a stray line): replies are always JSON
            if isinstance(message, dict) and message.get("id") == request_id:
                return message.get("reply")

    def _tail(self) -> str:
        return " | ".join(list(self._stderr)[-3:]) or "no output"

    def _reset(self) -> None:
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.kill()
            process.wait(timeout=5)

    def close(self) -> None:
        # Not under the lock: a call under way holds it until it ends (its time limit, Pyodide loading), and a
        # close (serve's Ctrl-C) must not wait for it; that call then hears the process stop and says so.
        process, self._process = self._process, None
        if process is None:
            return
        if process.stdin:
            process.stdin.close()  # local.mjs kills its spare child and exits when stdin closes
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def _pump(stream: IO[bytes] | None, sink: Any) -> None:
    if stream is None:
        return
    for line in iter(stream.readline, b""):
        sink(line)
    sink(None)
