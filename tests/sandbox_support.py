"""The local sandbox's tests' helpers: a slow script that sleeps without burning CPU, and waits on its client."""

from __future__ import annotations

import time
from collections.abc import Callable

from agent_runtime.sandbox import LocalSandbox


def sleeping(seconds: float, value: str) -> str:
    return f"import asyncio\nfor _ in range({round(seconds * 10)}):\n    await asyncio.sleep(0.1)\n{value!r}"


def until(condition: Callable[[], bool], what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.02)


def waiting(client: LocalSandbox) -> int:
    process = client._process
    return len(process.waiting) if process is not None else 0
