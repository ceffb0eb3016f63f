"""The workflow's ``context:`` section, validated at load time like every other key."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..sections import check_keys

KEYS = (
    "virtual_file_threshold_tokens",
    "virtual_file_preview_tokens",
    "compaction_threshold",
    "compaction_ratio",
    "mask_threshold_tokens",
    "context_budget",
    "status_role",
    "compactor",
)


@dataclass(frozen=True, slots=True)
class ContextSettings:
    """How the context engine manages one workflow's window."""

    virtual_file_threshold_tokens: int = 10_000
    virtual_file_preview_tokens: int = 1_000
    compaction_threshold: float = 0.8  # fraction of the usable window that triggers compaction
    compaction_ratio: float = 0.7  # oldest fraction of the history that a summary replaces
    mask_threshold_tokens: int = 0  # mask used tool outputs once they add up to this; 0: only when compacting
    context_budget: int | None = None  # hard cap on input tokens, below the model's window
    status_role: str = "system"  # "user" for servers whose chat templates reject a late system message
    compactor: str | None = None  # "module:function" or a prompt file relative to the workflow


def parse_context_section(data: Mapping[str, Any], report: Callable[[str, str], None]) -> ContextSettings:
    """Build settings from a raw section; ``report(key, why)`` collects problems."""
    check_keys("context", data, KEYS, report)
    defaults = ContextSettings()
    threshold = _int(data, "virtual_file_threshold_tokens", defaults.virtual_file_threshold_tokens, 100, report)
    preview = _int(data, "virtual_file_preview_tokens", defaults.virtual_file_preview_tokens, 50, report)
    if preview >= threshold:
        report(
            "context.virtual_file_preview_tokens", f"must be smaller than virtual_file_threshold_tokens ({threshold})"
        )
    budget = data.get("context_budget")
    if budget is not None:
        budget = _int(data, "context_budget", 0, 1024, report)
    role = data.get("status_role", defaults.status_role)
    if role not in ("system", "user"):
        report("context.status_role", f"must be 'system' or 'user', not {role!r}")
    compactor = data.get("compactor")
    if compactor is not None and (not isinstance(compactor, str) or not compactor.strip()):
        report("context.compactor", "must be 'package.module:function' or a prompt file path")
    return ContextSettings(
        virtual_file_threshold_tokens=threshold,
        virtual_file_preview_tokens=preview,
        compaction_threshold=_fraction(data, "compaction_threshold", defaults.compaction_threshold, report),
        compaction_ratio=_fraction(data, "compaction_ratio", defaults.compaction_ratio, report),
        mask_threshold_tokens=_int(data, "mask_threshold_tokens", defaults.mask_threshold_tokens, 0, report),
        context_budget=budget,
        status_role=role if role in ("system", "user") else "system",
        compactor=compactor if isinstance(compactor, str) else None,
    )


def _int(data: Mapping[str, Any], key: str, default: int, minimum: int, report: Callable[[str, str], None]) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        report(f"context.{key}", f"must be an integer, not {type(value).__name__} {value!r}")
        return default
    if value < minimum:
        report(f"context.{key}", f"must be at least {minimum}, got {value}")
        return default
    return value


def _fraction(data: Mapping[str, Any], key: str, default: float, report: Callable[[str, str], None]) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0.1 <= value <= 0.95:
        report(f"context.{key}", f"must be a number between 0.1 and 0.95, got {value!r}")
        return default
    return float(value)
