"""Checks shared by the workflow sections' parsers (``sandbox:``, ``subagents:``): each problem is reported with
its dotted key and the default is kept, so one pass lists every problem in the file."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Report = Callable[[str, str], None]


def check_keys(section: str, data: Mapping[str, Any], keys: Sequence[str], report: Report) -> None:
    for key in data:
        if key not in keys:
            report(f"{section}.{key}", f"unknown key; allowed: {', '.join(keys)}")


def flag(section: str, data: Mapping[str, Any], key: str, report: Report) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        report(f"{section}.{key}", "must be true or false")
    return value is True


def integer(
    section: str,
    data: Mapping[str, Any],
    key: str,
    default: int,
    report: Report,
    *,
    low: int = 1,
    high: int | None = None,
) -> int:
    """An integer from ``low`` to ``high`` (no upper bound when None); booleans are not integers here."""
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        expected = "a positive integer" if (low, high) == (1, None) else f"an integer from {low} to {high}"
        report(f"{section}.{key}", f"must be {expected}, got {value!r}")
        return default
    return value
