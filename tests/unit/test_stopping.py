"""The stop check: one store read per interval, a request once seen is kept, a store that fails is no request."""

from __future__ import annotations

from agent_runtime import messages as m
from agent_runtime.stopping import StopCheck, StopRequest, answer_pending, asked_now


def test_the_store_is_read_once_per_interval_and_a_request_is_kept() -> None:
    now, reads, stored = [0.0], [], [None]

    def lookup() -> StopRequest | None:
        reads.append(now[0])
        return stored[0]

    check = StopCheck(lookup, interval=2.0, clock=lambda: now[0])
    for t in (0.0, 0.5, 1.9):
        now[0] = t
        assert check() is None
    assert reads == [0.0]
    stored[0] = StopRequest("U1", 5.0, "slack")
    now[0] = 2.0
    assert check() == StopRequest("U1", 5.0, "slack") and check().reason() == "Stopped by <@U1>."
    stored[0] = None  # seen once, kept: the run is stopping
    now[0] = 10.0
    assert check() is not None and reads == [0.0, 2.0]


def test_a_store_that_fails_is_no_request_and_is_read_again_later() -> None:
    now, calls = [0.0], []

    def broken() -> StopRequest | None:
        calls.append(now[0])
        raise ConnectionError("DynamoDB is away")

    check = StopCheck(broken, interval=1.0, clock=lambda: now[0])
    assert check() is None
    now[0] = 1.0
    assert check() is None and calls == [0.0, 1.0]


def test_calls_left_unrun_are_answered_so_no_call_is_orphaned() -> None:
    calls = [{"id": f"c{n}", "type": "function", "function": {"name": "t", "arguments": "{}"}} for n in (1, 2)]
    history = [m.user("go"), m.assistant(None, calls), m.tool_result("c1", "done")]
    answer_pending(history, StopRequest("cli:ana", 0.0, "cli"))
    assert m.pending_tool_calls(history) == []
    assert history[-1]["content"] == "Not run: the run was stopped by cli:ana before this call."


def test_a_steps_boundary_reads_the_request_now_whatever_the_interval() -> None:
    """Was: a stop written within the interval after the last read let one more model call through (a CLI that
    starts in 0.1 s asked it between two steps 0.17 s apart: the second step read the stale answer)."""
    now, stored = [0.0], [None]
    check = StopCheck(lambda: stored[0], interval=2.0, clock=lambda: now[0])
    assert check() is None  # read at 0
    stored[0], now[0] = StopRequest("cli:dana", 0.1, "cli"), 0.2
    assert check() is None  # a streamed call's many asks: within the interval, not read again
    assert asked_now(check) == StopRequest("cli:dana", 0.1, "cli")  # the next step's boundary: read now
    assert asked_now(lambda: None) is None  # any other check is just asked
