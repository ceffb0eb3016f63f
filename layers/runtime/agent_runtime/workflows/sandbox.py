"""The workflow's ``sandbox:`` section: whether the ``python`` tool is offered, and its limits per call."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..sections import Report, check_keys, flag, integer

KEYS = ("enabled", "time_limit_seconds", "memory_mb")
TIME_LIMIT_RANGE = (1, 300)
MEMORY_RANGE = (64, 3072)  # what Python may allocate; the Deno child gets a fixed allowance on top


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    enabled: bool = False
    time_limit_seconds: int = 30  # wall clock per call; the process is killed, not interrupted
    memory_mb: int = 256


def parse_sandbox_section(data: Mapping[str, Any], report: Report) -> SandboxSettings:
    check_keys("sandbox", data, KEYS, report)
    defaults = SandboxSettings()
    low, high = TIME_LIMIT_RANGE
    time_limit = integer("sandbox", data, "time_limit_seconds", defaults.time_limit_seconds, report, low=low, high=high)
    low, high = MEMORY_RANGE
    return SandboxSettings(
        enabled=flag("sandbox", data, "enabled", report),
        time_limit_seconds=time_limit,
        memory_mb=integer("sandbox", data, "memory_mb", defaults.memory_mb, report, low=low, high=high),
    )
