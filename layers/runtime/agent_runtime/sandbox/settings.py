"""The workflow's ``sandbox:`` section: whether the ``python`` tool is offered, and its limits per call."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

KEYS = ("enabled", "time_limit_seconds", "memory_mb")
TIME_LIMIT_RANGE = (1, 300)
MEMORY_RANGE = (64, 3072)  # what Python may allocate; the Deno child gets a fixed allowance on top


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    enabled: bool = False
    time_limit_seconds: int = 30  # wall clock per call; the process is killed, not interrupted
    memory_mb: int = 256


def parse_sandbox_section(data: Mapping[str, Any], report: Callable[[str, str], None]) -> SandboxSettings:
    for key in data:
        if key not in KEYS:
            report(f"sandbox.{key}", f"unknown key; allowed: {', '.join(KEYS)}")
    enabled = data.get("enabled", False)
    if not isinstance(enabled, bool):
        report("sandbox.enabled", "must be true or false")
    defaults = SandboxSettings()
    return SandboxSettings(
        enabled=enabled is True,
        time_limit_seconds=_ranged(data, "time_limit_seconds", defaults.time_limit_seconds, TIME_LIMIT_RANGE, report),
        memory_mb=_ranged(data, "memory_mb", defaults.memory_mb, MEMORY_RANGE, report),
    )


def _ranged(
    data: Mapping[str, Any], key: str, default: int, bounds: tuple[int, int], report: Callable[[str, str], None]
) -> int:
    value = data.get(key, default)
    low, high = bounds
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        report(f"sandbox.{key}", f"must be an integer from {low} to {high}, got {value!r}")
        return default
    return value
