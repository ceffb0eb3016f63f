"""serve's workers over its in-memory queue, as SQS FIFO and Lambda work the queue on AWS: a message group's
messages (one thread's) in the order sent, one at a time; different groups at once, each on a lane of its own.

A lane is a worker (its own process services and logger: a run's log keys never reach another's lines). With
every lane busy, a group waits for the first lane free, in the order its message came; a group never waits for
another group's run while a lane is free.

A message its lane gives back (a handle's answer: seconds) is handed over again after that wait, as SQS makes a
failed message visible again: its group holds it at its head meanwhile, so the group's later messages wait behind it,
in order; other groups go on.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from queue import Empty, Queue

from ..triggers.queue import Queued

# Lanes of serve's queue, as Lambda invocations on AWS (one message each; different message groups at once).
# Four: one person's playground or one team's app through a tunnel has a few threads at work at once; each lane
# holds a run's files and a model stream in this process, and a local model server answers a few requests at
# once (Ollama's default is up to four), more would wait there; the stack's default is ten
# (WorkerReservedConcurrency).
WIDTH = 4
POLL_SECONDS = 0.2  # how soon a lane sees close

# One message's body, worked on to its end (its failures its own to say): None, or the seconds after which it is
# to be handed over again (``again.py``).
Handle = Callable[[str], float | None]


class Lanes:
    """Takes ``messages`` (bodies carrying their ``group``, as :class:`~..triggers.queue.Queued` does; one
    without is a group of its own) and hands each to one of ``lanes``, keeping a group's order."""

    def __init__(self, messages: Queue[str], lanes: Sequence[Handle], stop: threading.Event) -> None:
        self.messages, self.lanes, self.stop = messages, lanes, stop
        self._turn = threading.Condition()
        self._waiting: dict[str, deque[str]] = {}  # group → its messages not taken yet, in the order sent
        self._ready: deque[str] = deque()  # groups with a message waiting and none under way, oldest first
        self._busy: set[str] = set()  # groups with a message under way
        self._threads: list[threading.Thread] = []

    def start(self, name: str = "serve-lane") -> Lanes:
        self._threads.append(threading.Thread(target=self._feed, name=f"{name}-queue", daemon=True))
        for number, handle in enumerate(self.lanes, 1):
            lane = threading.Thread(target=self._lane, args=(handle,), name=f"{name}-{number}", daemon=True)
            self._threads.append(lane)
        for thread in self._threads:
            thread.start()
        return self

    def join(self, seconds: float) -> bool:
        """Waits, after stop, for every lane to end its message under way, at most ``seconds`` in all; True if
        they all have."""
        until = time.monotonic() + seconds
        for thread in self._threads:
            thread.join(max(until - time.monotonic(), 0.0))
        return not any(thread.is_alive() for thread in self._threads)

    def _feed(self) -> None:
        while not self.stop.is_set():
            try:
                body = self.messages.get(timeout=POLL_SECONDS)
            except Empty:
                continue
            self.put(body)

    def put(self, body: str) -> None:
        group = getattr(body, "group", None) or f"~{id(body)}"
        with self._turn:
            waiting = self._waiting.setdefault(group, deque())
            waiting.append(body)
            if len(waiting) == 1 and group not in self._busy:
                self._ready.append(group)
                self._turn.notify()

    def _lane(self, handle: Handle) -> None:
        while (taken := self._take()) is not None:
            group, body = taken
            again: float | None = None
            try:
                again = handle(body)
            finally:
                if again is None:
                    self._done(group)
                else:
                    self._later(group, body, again)

    def _later(self, group: str, body: str, seconds: float) -> None:
        """``body`` back at its group's head, the group busy until ``seconds`` have passed: a timer frees it."""
        with self._turn:
            self._waiting[group].appendleft(body)
        timer = threading.Timer(seconds, self._done, args=(group,))
        timer.daemon = True  # a close does not wait for it: the message is lost with the queue, as any waiting
        timer.start()

    def _take(self) -> tuple[str, str] | None:
        """The oldest ready group's next message, its group marked busy; None once serve closes."""
        with self._turn:
            while not self._ready:
                if self.stop.is_set():
                    return None
                self._turn.wait(POLL_SECONDS)
            if self.stop.is_set():
                return None
            group = self._ready.popleft()
            self._busy.add(group)
            body = self._waiting[group].popleft()
            if isinstance(body, Queued):
                body.received += 1
            return group, body

    def _done(self, group: str) -> None:
        with self._turn:
            self._busy.discard(group)
            if self._waiting[group]:
                self._ready.append(group)
                self._turn.notify()
            else:
                del self._waiting[group]
