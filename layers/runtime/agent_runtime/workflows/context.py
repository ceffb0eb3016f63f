"""The workflow's ``context:`` section, validated at load time like every other key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..sections import Report, check_keys, choice, integer, number, text

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
    # Mask used tool outputs (with pointers that get them back) once they add up to this; 0: only when compacting.
    mask_threshold_tokens: int = 1_000
    context_budget: int | None = None  # hard cap on input tokens, below the model's window
    status_role: str = "system"  # "user" for servers whose chat templates reject a late system message
    compactor: str | None = None  # "module:function" or a prompt file relative to the workflow


def parse_context_section(data: Mapping[str, Any], report: Report) -> ContextSettings:
    """Build settings from a raw section; ``report(key, why)`` collects problems."""
    check_keys("context", data, KEYS, report)
    defaults = ContextSettings()
    whole = partial(integer, "context", data, report=report)
    fraction = partial(number, "context", data, report=report, low=0.1, high=0.95)
    threshold = whole("virtual_file_threshold_tokens", defaults.virtual_file_threshold_tokens, low=100)
    preview = whole("virtual_file_preview_tokens", defaults.virtual_file_preview_tokens, low=50)
    if preview >= threshold:
        report(
            "context.virtual_file_preview_tokens", f"must be smaller than virtual_file_threshold_tokens ({threshold})"
        )
    role = choice("context", data, "status_role", ("system", "user"), defaults.status_role, report)
    return ContextSettings(
        virtual_file_threshold_tokens=threshold,
        virtual_file_preview_tokens=preview,
        compaction_threshold=fraction("compaction_threshold", defaults.compaction_threshold),
        compaction_ratio=fraction("compaction_ratio", defaults.compaction_ratio),
        mask_threshold_tokens=whole("mask_threshold_tokens", defaults.mask_threshold_tokens, low=0),
        context_budget=None if data.get("context_budget") is None else whole("context_budget", 0, low=1024),
        status_role=role or defaults.status_role,
        compactor=text("context", data, "compactor", report, required=False),
    )
