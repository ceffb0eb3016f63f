"""Wake-ups without AWS: ``serve``'s timers deliver into the local queue once per key, at their time."""

from __future__ import annotations

import json
import re
import time
from queue import Empty

import pytest
from agent_runtime.service.wakeups import TimerWakeups, schedule_name
from agent_runtime.triggers.queue import LocalQueue


def received(queue: LocalQueue, timeout: float) -> dict[str, object] | None:
    try:
        return dict(json.loads(queue.messages.get(timeout=timeout)))
    except Empty:
        return None


def test_a_timer_delivers_its_message_at_its_time_and_once_per_key() -> None:
    queue = LocalQueue()
    wakeups = TimerWakeups(queue)
    message = {"type": "expire", "run_id": "run-1"}
    wakeups.at(time.time() + 0.3, message, group="thread-1", key="run-1:100")
    wakeups.at(time.time() + 0.3, message, group="thread-1", key="run-1:100")  # the same outcome, redelivered
    assert received(queue, 0.1) is None  # not yet
    assert received(queue, 2) == message
    assert received(queue, 0.5) is None  # once
    wakeups.close()


def test_a_time_already_past_delivers_at_once_and_close_cancels_the_rest() -> None:
    queue = LocalQueue()
    wakeups = TimerWakeups(queue)
    wakeups.at(time.time() - 60, {"type": "expire", "run_id": "a"}, group="t", key="a")
    wakeups.at(time.time() + 0.3, {"type": "expire", "run_id": "b"}, group="t", key="b")
    assert received(queue, 1) == {"type": "expire", "run_id": "a"}
    wakeups.close()
    assert received(queue, 0.6) is None


@pytest.mark.parametrize("key", ["run-1:1763800000.5", "run-" + "x" * 300 + ".sub2:1:again:2", ""])
def test_schedule_names_fit_schedulers_rules(key: str) -> None:
    name = schedule_name(key)
    assert re.fullmatch(r"[0-9a-zA-Z\-_.]{1,64}", name) and name == schedule_name(key)
