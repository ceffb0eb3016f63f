"""The stop check: one store read per interval, a request once seen is kept, a store that fails is no request."""

from __future__ import annotations

from agent_runtime import messages as m
from agent_runtime.stopping import StopCheck, StopRequest, answer_pending


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
