"""Wake-ups: a queue message delivered at a given time. A run that waits for approval is woken when its request
expires, so the thread hears "expired" and the run finishes even when nobody writes or clicks again.

On AWS a wake-up is a one-time EventBridge Scheduler schedule that sends the message to the run queue in the
thread's message group (so it is ordered with the thread's other messages) and deletes itself after firing.
``agent-runtime serve`` uses a timer thread per wake-up (lost when the process ends: an expired request is then
noticed when the thread moves on, as it is wherever there are no wake-ups).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import threading
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from ..triggers.queue import EventQueue

EARLIEST_SECONDS = 60  # Scheduler refuses a time in the past; a wake-up that is due already comes a minute later


class Wakeups(Protocol):
    def at(self, when: float, message: dict[str, Any], *, group: str, key: str) -> None:
        """Deliver ``message`` at ``when`` (epoch seconds) in message group ``group``; once per ``key``."""


class NoWakeups:
    def at(self, when: float, message: dict[str, Any], *, group: str, key: str) -> None:
        return None


@dataclass(frozen=True, slots=True)
class SchedulerWakeups:
    """``client`` is a boto3 ``scheduler`` client; ``role_arn`` may send to ``queue_arn`` (template.yaml)."""

    client: Any
    queue_arn: str
    role_arn: str
    group_name: str = "default"

    def at(self, when: float, message: dict[str, Any], *, group: str, key: str) -> None:
        moment = datetime.fromtimestamp(max(when, time.time() + EARLIEST_SECONDS), UTC)
        target = {
            "Arn": self.queue_arn,
            "RoleArn": self.role_arn,
            "Input": json.dumps(message),
            "SqsParameters": {"MessageGroupId": group},
        }
        with contextlib.suppress(self.client.exceptions.ConflictException):  # set already: a redelivery
            self.client.create_schedule(
                Name=schedule_name(key),
                GroupName=self.group_name,
                ScheduleExpression=f"at({moment:%Y-%m-%dT%H:%M:%S})",
                ScheduleExpressionTimezone="UTC",
                FlexibleTimeWindow={"Mode": "OFF"},
                ActionAfterCompletion="DELETE",
                Target=target,
            )


def schedule_name(key: str) -> str:
    """Scheduler names allow 64 of ``[0-9a-zA-Z-_.]``: a digest of the key (run ids and call ids can be longer)."""
    return f"agent-runtime-{hashlib.sha256(key.encode()).hexdigest()[:40]}"


class TimerWakeups:
    """In-process wake-ups for ``serve``: a daemon timer per key that sends the message to the local queue."""

    def __init__(self, queue: EventQueue) -> None:
        self.queue = queue
        self._timers: dict[str, threading.Timer] = {}

    def at(self, when: float, message: dict[str, Any], *, group: str, key: str) -> None:
        if key in self._timers:
            return
        send = functools.partial(self.queue.send, message, group=group, dedup=f"wakeup:{key}")
        timer = self._timers[key] = threading.Timer(max(0.0, when - time.time()), send)
        timer.daemon = True
        timer.start()

    def close(self) -> None:
        for timer in self._timers.values():
            timer.cancel()
