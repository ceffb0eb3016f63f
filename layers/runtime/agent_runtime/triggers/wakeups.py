"""Wake-ups: a queue message delivered at a given time. A run that waits for approval is woken when its request
expires, so the thread hears "expired" and the run finishes even when nobody writes or clicks again.

On AWS a wake-up is a one-time EventBridge Scheduler schedule that sends the message to the run queue in the
thread's message group (so it is ordered with the thread's other messages) and deletes itself after firing.
Elsewhere (``agent-runtime serve``, tests without a scheduler) there is no timer: an expired request is noticed
when the thread moves on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

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
