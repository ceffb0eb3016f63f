"""serve's lanes over its in-memory queue (``service/lanes.py``), as SQS FIFO and Lambda work the queue on AWS.

The invariant, over interleavings of sends across message groups and lane counts: within a group, messages are
handled in the order sent and never two at once; never more at once than there are lanes; and a group never waits
for another group's slow run while a lane is free — a slow message here blocks until the test lets it go, so a
group that waited behind one would never finish before the release (no timing decides the verdict)."""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from agent_runtime.service.lanes import Lanes
from agent_runtime.triggers.queue import LocalQueue, Queued
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.playground_support import until

GROUPS = "abcde"


class Record:
    """What the lanes did: each message's start and end, what ran at once, what broke the rules."""

    def __init__(self, groups: list[str], slow: set[int]) -> None:
        self.groups, self.slow = groups, slow
        self.release = threading.Event()
        self.lock = threading.Lock()
        self.running: set[str] = set()
        self.started: list[int] = []
        self.finished: list[int] = []
        self.peak = 0
        self.broken: list[str] = []

    def handle(self, body: str) -> None:
        number = json.loads(body)["n"]
        group = self.groups[number]
        if getattr(body, "group", None) != group:
            self.broken.append(f"message {number} lost its group")
        with self.lock:
            if group in self.running:
                self.broken.append(f"two of group {group} at once")
            self.running.add(group)
            self.started.append(number)
            self.peak = max(self.peak, len(self.running))
        if number in self.slow:
            self.release.wait(30)
        with self.lock:
            self.running.discard(group)
            self.finished.append(number)


@contextmanager
def lanes(width: int, record: Record) -> Iterator[LocalQueue]:
    queue, stop = LocalQueue(), threading.Event()
    started = Lanes(queue.messages, [record.handle] * width, stop).start("test-lane")
    try:
        yield queue
    finally:
        record.release.set()
        stop.set()
        ended = started.join(5)  # no lane left polling into the next test
    assert ended, "every lane ends its message under way and stops"


@settings(max_examples=30, deadline=None)
@given(
    width=st.integers(1, 4),
    sends=st.lists(st.tuples(st.sampled_from(GROUPS), st.booleans()), min_size=1, max_size=14),
    data=st.data(),
)
def test_a_group_keeps_its_order_and_never_waits_for_another_groups_slow_run(
    width: int, sends: list[tuple[str, bool]], data: st.DataObject
) -> None:
    groups = [group for group, _ in sends]
    # Slow groups: their first message blocks until released; fewer of them than lanes, so one lane stays free.
    slow_groups = data.draw(st.sets(st.sampled_from(sorted(set(groups))), max_size=width - 1), label="slow groups")
    slow = {groups.index(group) for group in slow_groups}
    record = Record(groups, slow)
    with lanes(width, record) as queue:
        for number, (group, pause) in enumerate(sends):
            queue.send({"type": "test", "n": number}, group=group, dedup=str(number))
            if pause:
                time.sleep(0.002)  # a lane takes a message before the next is sent
        free = [n for n, group in enumerate(groups) if group not in slow_groups]
        until(lambda: set(free) <= set(record.finished), timeout=15, what="the other groups, beside the slow runs")
        with record.lock:
            behind = [n for n in record.started if groups[n] in slow_groups and n not in slow]
        assert behind == []  # a slow group's later messages waited for its slow one
        record.release.set()
        until(lambda: len(record.finished) == len(sends), timeout=15, what="every message")
    assert record.broken == []
    assert record.peak <= width
    for group in set(groups):
        sent = [n for n, g in enumerate(groups) if g == group]
        assert [n for n in record.started if groups[n] == group] == sent  # in the order sent
        assert [n for n in record.finished if groups[n] == group] == sent


def test_the_local_queue_hands_each_body_with_its_group_and_as_text() -> None:
    """Whoever reads ``messages`` directly (tests, a worker of their own) still reads bodies."""
    queue = LocalQueue(apart=("stop:",))
    queue.send({"type": "event", "x": 1}, group="C0HELP:1.0", dedup="one")
    queue.send({"type": "stop"}, group="stop:C0HELP:1.0", dedup="two")
    body, stop = queue.messages.get_nowait(), queue.beside.get_nowait()
    assert isinstance(body, Queued) and body.group == "C0HELP:1.0" and json.loads(body) == {"type": "event", "x": 1}
    assert isinstance(stop, Queued) and stop.group == "stop:C0HELP:1.0"


@settings(max_examples=10, deadline=None)
@given(
    width=st.integers(1, 3),
    sends=st.lists(st.tuples(st.sampled_from("abc"), st.integers(0, 2)), min_size=1, max_size=8),
)
def test_a_message_given_back_comes_again_after_its_wait_ahead_of_its_groups_later_ones(
    width: int, sends: list[tuple[str, int]]
) -> None:
    """A lane's handle that answers seconds (Slack out of reach, ``service/again.py``) has its message handed over
    again after that wait, its receive count one more each time; its group's later messages wait behind it (the
    group's order kept, as a FIFO group on SQS); the other groups go on meanwhile, and nothing is lost."""
    wait = 0.05
    tries: list[tuple[int, int, float]] = []  # (message, its receive count, when)
    lock = threading.Lock()

    def handle(body: str) -> float | None:
        number = json.loads(body)["n"]
        received = getattr(body, "received", 0)
        with lock:
            tries.append((number, received, time.monotonic()))
        return wait if received <= sends[number][1] else None  # it fails its first `fails` times

    queue, stop = LocalQueue(), threading.Event()
    started = Lanes(queue.messages, [handle] * width, stop).start("test-again")
    try:
        for number, (group, _) in enumerate(sends):
            queue.send({"type": "test", "n": number}, group=group, dedup=str(number))
        total = sum(fails + 1 for _, fails in sends)
        until(lambda: len(tries) == total, timeout=15, what="every message, given back and handed over again")
    finally:
        stop.set()
        assert started.join(5)
    for group in {g for g, _ in sends}:
        mine = [(n, received, at) for n, received, at in tries if sends[n][0] == group]
        expected = [(n, k) for n, (g, fails) in enumerate(sends) if g == group for k in range(1, fails + 2)]
        assert [(n, received) for n, received, _ in mine] == expected  # its tries together, then the next message
        for (n, _, at), (m, _, then) in itertools.pairwise(mine):
            assert n != m or then - at >= wait * 0.9  # handed over again after its wait, not before
