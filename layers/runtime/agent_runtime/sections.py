"""The one validator of workflow sections: every parser (the top level, ``model:``, ``limits:``, ``context:``,
``files:``, ``skills:``, ``subagents:``, ``sandbox:``, ``triggers:``) checks its keys and values with these.

Each problem is reported with its dotted key and the default is kept, so one pass lists every problem in the file.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

Report = Callable[[str, str], None]


def _where(section: str, key: str) -> str:
    return f"{section}.{key}" if section else key


def check_keys(section: str, data: Mapping[str, Any], keys: Sequence[str], report: Report) -> None:
    """Unknown keys, with the closest known one when there is one (a typo), else the list of known ones."""
    for key in data:
        if key not in keys:
            close = difflib.get_close_matches(str(key), keys, n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"allowed: {', '.join(keys)}"
            report(_where(section, str(key)), f"unknown key; {hint}")


def flag(section: str, data: Mapping[str, Any], key: str, report: Report) -> bool:
    value = data.get(key, False)
    if not isinstance(value, bool):
        report(_where(section, key), "must be true or false")
    return value is True


def integer(
    section: str,
    data: Mapping[str, Any],
    key: str,
    default: int | None,
    report: Report,
    *,
    low: int = 1,
    high: int | None = None,
) -> int:
    """An integer from ``low`` to ``high`` (no upper bound when None); booleans are not integers here. A missing
    key with ``default=None`` is required."""
    value, where = data.get(key, default), _where(section, key)
    fallback = default if default is not None else low
    if value is None:
        report(where, "is required")
    elif isinstance(value, bool) or not isinstance(value, int):
        report(where, f"must be an integer, not {type(value).__name__} {value!r}")
    elif high is not None and not low <= value <= high:
        report(where, f"must be an integer from {low} to {high}, got {value}")
    elif value < low:
        report(where, f"must be at least {low}, got {value}")
    else:
        return value
    return fallback


def number(
    section: str, data: Mapping[str, Any], key: str, default: float, report: Report, *, low: float, high: float
) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not low <= value <= high:
        report(_where(section, key), f"must be a number between {low} and {high}, got {value!r}")
        return default
    return float(value)


def text(section: str, data: Mapping[str, Any], key: str, report: Report, *, required: bool = True) -> str | None:
    value = data.get(key)
    if value is None:
        if required:
            report(_where(section, key), "is required")
        return None
    if not isinstance(value, str) or not value.strip():
        report(_where(section, key), "must be a non-empty string")
        return None
    return value


def choice(
    section: str, data: Mapping[str, Any], key: str, options: Sequence[str], default: str | None, report: Report
) -> str | None:
    value = data.get(key, default)
    if value is not None and value not in options:
        report(_where(section, key), f"must be one of {', '.join(options)}, not {value!r}")
        return default
    return value if value is None else str(value)


def mapping(section: str, data: Mapping[str, Any], key: str, report: Report) -> Mapping[str, Any]:
    """A sub-section; empty when absent or not a mapping (reported)."""
    value = data.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        report(_where(section, key), f"must be a mapping, not {type(value).__name__}")
        return {}
    return value
