"""A run's time budget: Lambda's remaining time minus a safety margin, or a wall-clock limit, or none."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


class LambdaContextLike(Protocol):
    def get_remaining_time_in_millis(self) -> int: ...


@dataclass(frozen=True, slots=True)
class Deadline:
    """Answers "how many seconds are left before the run must suspend?"."""

    at: float | None  # monotonic seconds; None means no deadline
    clock: Callable[[], float] = field(default=time.monotonic, compare=False)

    @classmethod
    def none(cls) -> Deadline:
        return cls(at=None)

    @classmethod
    def after(cls, seconds: float, *, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(at=clock() + seconds, clock=clock)

    @classmethod
    def from_lambda_context(cls, context: LambdaContextLike, *, margin_seconds: float) -> Deadline:
        """Suspend ``margin_seconds`` before Lambda would kill the invocation (time to checkpoint)."""
        remaining = context.get_remaining_time_in_millis() / 1000.0
        return cls.after(max(0.0, remaining - margin_seconds))

    def remaining(self) -> float:
        return float("inf") if self.at is None else self.at - self.clock()

    def expired(self) -> bool:
        return self.remaining() <= 0
