"""The local sandbox runs calls side by side (serve's lanes, a run's parallel tool calls) over one Node process:
a quick call does not queue behind a slow one, each caller gets its own reply, a call that times out leaves its
neighbours alone, and a Node process that dies fails every waiter at once, then the next call starts a new one.

The real Node + Deno + Pyodide; the slow calls sleep with asyncio (no CPU burnt on a shared 2-core machine)."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from agent_runtime.sandbox import LocalSandbox, SandboxError
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.sandbox_support import sleeping, until, waiting


@pytest.fixture(scope="module")
def local() -> Iterator[LocalSandbox]:
    """A sandbox of this module's own: a case here kills its Node process."""
    client = LocalSandbox(REPO / "functions" / "sandbox")
    client.check()
    client.run("None")  # Node started and a spare child loading: the cases measure calls, not the first start
    yield client
    client.close()


def event(code: str) -> dict[str, Any]:
    return {"code": code, "files": [], "time_limit_ms": 20_000, "memory_mb": 256}


@pytest.mark.timed  # two calls racing: beside another worker a cold Deno child can take most of the slow call's span
def test_a_quick_call_does_not_wait_for_a_slow_one(local: LocalSandbox) -> None:
    with ThreadPoolExecutor(2) as pool:
        started = time.monotonic()
        slow = pool.submit(lambda: (local.run(sleeping(3, "slow")), time.monotonic()))
        until(lambda: waiting(local) == 1, "slow call sent")
        fast = pool.submit(lambda: (local.run("'fast'"), time.monotonic()))
        (slow_result, slow_done), (fast_result, fast_done) = slow.result(), fast.result()
    assert (slow_result.result, fast_result.result) == ("slow", "fast")
    # One at a time, the quick call would end after the slow one: it ends within the slow one's first 70 %.
    assert fast_done - started < 0.7 * (slow_done - started), (fast_done - started, slow_done - started)


@settings(max_examples=3, deadline=None)
@given(tokens=st.lists(st.text(st.characters(exclude_categories=("Cs",)), max_size=12), min_size=2, max_size=3))
def test_each_caller_gets_its_own_reply(local: LocalSandbox, tokens: list[str]) -> None:
    """Replies come back in the reverse order of the requests; each call also starts from an interpreter that has
    never seen another call's globals (each has its own Deno child, even side by side)."""

    def ask(index: int, token: str) -> Any:
        delay = 0.1 * (len(tokens) - index)
        code = f"seen = globals().get('TOKEN')\nTOKEN = {token!r}\n" + sleeping(delay, "") + "\n[seen, TOKEN]"
        return local.run(code).result

    with ThreadPoolExecutor(len(tokens)) as pool:
        answers = list(pool.map(ask, range(len(tokens)), tokens))
    assert answers == [[None, token] for token in tokens]


def test_a_call_that_times_out_leaves_its_neighbours_alone(local: LocalSandbox) -> None:
    with ThreadPoolExecutor(3) as pool:
        neighbour = pool.submit(local.run, sleeping(2, "neighbour"))
        until(lambda: waiting(local) == 1, "neighbour sent")
        node = local._process
        with pytest.raises(SandboxError, match=r"^the local sandbox did not answer within 1 s$"):
            local._invoke(event(sleeping(3, "late")), 1)
        # Started before the abandoned call's late reply comes in, ends after it: that reply finds no one.
        after = pool.submit(local.run, sleeping(2.5, "after"))
        assert neighbour.result().result == "neighbour"
        assert after.result().result == "after"
    assert local._process is node  # the process went on serving


@pytest.mark.timed  # a wall-time bound: run alone
def test_a_dead_node_process_fails_every_waiter_at_once_and_the_next_call_starts_another(
    local: LocalSandbox,
) -> None:
    errors: list[str] = []

    def call() -> None:
        try:
            local.run(sleeping(3, "never"))
        except SandboxError as error:
            errors.append(str(error))

    calls = [threading.Thread(target=call) for _ in range(3)]
    for thread in calls:
        thread.start()
    until(lambda: waiting(local) == 3, "three calls sent")
    node = local._process
    assert node is not None
    killed = time.monotonic()  # its Deno children end by themselves: their pipes to it are gone
    os.kill(node.popen.pid, signal.SIGKILL)
    for thread in calls:
        thread.join(timeout=10)
    failed_within = time.monotonic() - killed
    assert errors == ["the local sandbox stopped (signal 9): no output"] * 3
    assert failed_within < 2.5  # the settle wait for stderr is 1 s; their code still had three to go
    assert local.run("'again'").result == "again"
    assert local._process is not node
