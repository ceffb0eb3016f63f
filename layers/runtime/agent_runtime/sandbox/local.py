"""The sandbox on this machine: one long-lived ``node functions/sandbox/local.mjs`` per client, shared by callers.

It runs the same code as the Lambda function (each request still gets a fresh Deno child), so local runs and tests
exercise the real boundary. Calls run side by side (serve's lanes, a run's parallel tool calls): each request is one
JSON line tagged with an id, and a reader thread hands each reply to the caller waiting on that id, so a slow script
in one thread does not hold up a quick one in another. The process is started on first use and restarted if it dies.
"""

from __future__ import annotations

import collections
import contextlib
import itertools
import json
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any

from .client import SandboxClient, never
from .exceptions import SandboxCancelled, SandboxError, SandboxUnavailableError

# Calls under way at once per client, as serve's four lanes: each is a Deno child (~150 MB resident, up to its
# memory_mb), and more would only queue for the same two or four cores. Callers past it wait for a slot.
CONCURRENCY = 4
# How often a call asks whether its run was stopped: a stop ends a 30 s script within this (and the run's own
# stop check's interval), not at its time limit.
CANCEL_CHECK_SECONDS = 0.25
STDERR_SETTLE_SECONDS = 1.0  # after stdout ends, how long the stderr reader may take to catch the last lines


class LocalSandbox(SandboxClient):
    def __init__(
        self,
        directory: Path,
        *,
        node: str | None = None,
        env: Mapping[str, str] | None = None,
        concurrency: int = CONCURRENCY,
    ) -> None:
        self.directory = Path(directory)
        self.env = dict(env) if env is not None else None  # the Node process's environment (default: inherited)
        self.node = node or shutil.which("node") or "node"
        self._process: _NodeProcess | None = None
        self._ids = itertools.count(1)
        self._slots = threading.BoundedSemaphore(concurrency)
        self._starting = threading.Lock()  # one process start at a time; never held during a call

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

    def _current(self) -> _NodeProcess:
        with self._starting:
            if self._process is None or not self._process.alive():
                self.check()
                self._process = _NodeProcess([self.node, "local.mjs"], self.directory, self.env)
            return self._process

    def _invoke(self, event: dict[str, Any], timeout: float, cancelled: Callable[[], bool] = never) -> Any:
        while not self._slots.acquire(timeout=CANCEL_CHECK_SECONDS):
            if cancelled():
                raise SandboxCancelled("the call was given up before a slot was free: its run was stopped")
        try:
            process = self._current()
            return process.call(next(self._ids), event, timeout, cancelled)
        finally:
            self._slots.release()

    def close(self) -> None:
        # Without the start lock or a slot: calls under way hold their slots until they end (their time limit), and
        # a close (serve's Ctrl-C) must not wait for them; they hear the process stop and say so.
        process, self._process = self._process, None
        if process is not None:
            process.stop()


class _NodeProcess:
    """One ``node local.mjs``: requests written one line at a time, replies routed to their callers by id."""

    def __init__(self, command: list[str], directory: Path, env: dict[str, str] | None) -> None:
        self.popen = subprocess.Popen(
            command, cwd=directory, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        self.stderr: collections.deque[str] = collections.deque(maxlen=20)
        self.waiting: dict[int, Future[Any]] = {}
        self.ended = False  # stdout closed: every waiter has been failed, nobody may register
        self._routes = threading.Lock()  # guards waiting and ended together
        self._writing = threading.Lock()  # one request line at a time on stdin
        self._stderr_done = threading.Event()
        threading.Thread(target=self._read_replies, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def alive(self) -> bool:
        return not self.ended and self.popen.poll() is None

    def call(self, request_id: int, event: dict[str, Any], timeout: float, cancelled: Callable[[], bool]) -> Any:
        future: Future[Any] = Future()
        line = json.dumps({"id": request_id, "event": event}).encode() + b"\n"
        with self._routes:
            if self.ended:
                raise SandboxError(self._stopped())
            self.waiting[request_id] = future
        try:
            with self._writing:
                assert self.popen.stdin is not None
                self.popen.stdin.write(line)
                self.popen.stdin.flush()
        except (OSError, ValueError) as error:  # ValueError: closed under it (serve stopping)
            self._forget(request_id)
            self.popen.kill()  # a process that takes no requests is of no use to the next caller either
            raise SandboxError(f"the local sandbox is not accepting requests: {error}; {self._tail()}") from None
        return self._wait(request_id, future, timeout, cancelled)

    def _wait(self, request_id: int, future: Future[Any], timeout: float, cancelled: Callable[[], bool]) -> Any:
        """The reply, in slices of CANCEL_CHECK_SECONDS: past the timeout or once cancelled, only this call is given
        up (its Deno child ended): the process and its neighbours go on, and a late reply finds no one."""
        deadline = time.monotonic() + timeout
        while True:
            with contextlib.suppress(TimeoutError):
                return future.result(max(0.0, min(CANCEL_CHECK_SECONDS, deadline - time.monotonic())))
            given_up = cancelled()
            if not given_up and time.monotonic() < deadline:
                continue
            if self._forget(request_id) is None and future.done():
                return future.result()  # it came in just now
            self._cancel(request_id)
            if given_up:
                raise SandboxCancelled("the call was given up: its run was stopped")
            raise SandboxError(f"the local sandbox did not answer within {timeout:.0f} s")

    def _cancel(self, request_id: int) -> None:
        line = json.dumps({"id": request_id, "cancel": True}).encode() + b"\n"
        with self._writing, contextlib.suppress(OSError, ValueError):  # a process gone has no child left either
            assert self.popen.stdin is not None
            self.popen.stdin.write(line)
            self.popen.stdin.flush()

    def _forget(self, request_id: int) -> Future[Any] | None:
        with self._routes:
            return self.waiting.pop(request_id, None)

    def _read_replies(self) -> None:
        for line in _lines(self.popen.stdout):
            try:
                message = json.loads(line)
            except ValueError:
                continue  # not ours (a stray line): replies are always JSON
            if isinstance(message, dict) and isinstance(message.get("id"), int):
                future = self._forget(message["id"])
                if future is not None:
                    future.set_result(message.get("reply"))
        self._fail_everyone()

    def _fail_everyone(self) -> None:
        self._stderr_done.wait(STDERR_SETTLE_SECONDS)  # so the error carries the process's last words
        with self._routes:
            self.ended = True
            waiting, self.waiting = self.waiting, {}
        for future in waiting.values():
            future.set_exception(SandboxError(self._stopped()))

    def _read_stderr(self) -> None:
        for line in _lines(self.popen.stderr):
            self.stderr.append(line.decode("utf-8", "replace").rstrip())
        self._stderr_done.set()

    def _stopped(self) -> str:
        try:
            code = self.popen.wait(timeout=1)
        except subprocess.TimeoutExpired:
            return f"the local sandbox stopped: {self._tail()}"
        how = f"signal {-code}" if code < 0 else f"exit code {code}"
        return f"the local sandbox stopped ({how}): {self._tail()}"

    def _tail(self) -> str:
        return " | ".join(list(self.stderr)[-3:]) or "no output"

    def stop(self) -> None:
        if self.popen.stdin:
            # local.mjs kills its Deno children and exits when stdin closes (OSError: a line half-written to a
            # process that is gone)
            with contextlib.suppress(OSError):
                self.popen.stdin.close()
        try:
            self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait(timeout=5)


def _lines(stream: IO[bytes] | None) -> Iterator[bytes]:
    return iter(stream.readline, b"") if stream is not None else iter(())
