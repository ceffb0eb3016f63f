"""The workflow's ``subagents:`` section: whether children may be started, with which models, within what."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

KEYS = ("enabled", "models", "max_depth", "max_tool_calls", "max_tokens", "max_seconds")


@dataclass(frozen=True, slots=True)
class SubagentSettings:
    enabled: bool = False
    models: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))  # name -> context window
    max_depth: int = 1  # 1: the workflow's agent may start children, children may not start their own
    max_tool_calls: int = 20  # per child, and never more than the parent has left
    max_tokens: int = 200_000  # total tokens (prompt + completion) per child
    max_seconds: float = 300.0  # per child, and never past the parent's deadline


def parse_subagents_section(data: Mapping[str, Any], report: Callable[[str, str], None]) -> SubagentSettings:
    for key in data:
        if key not in KEYS:
            report(f"subagents.{key}", f"unknown key; allowed: {', '.join(KEYS)}")
    enabled = data.get("enabled", False)
    if not isinstance(enabled, bool):
        report("subagents.enabled", "must be true or false")
    models = data.get("models", {})
    if not isinstance(models, Mapping) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 1024 for k, v in models.items()
    ):
        report("subagents.models", "must map model names to their context window (an integer >= 1024)")
        models = {}
    defaults = SubagentSettings()
    return SubagentSettings(
        enabled=enabled is True,
        models=MappingProxyType(dict(models)),
        max_depth=_positive(data, "max_depth", defaults.max_depth, report),
        max_tool_calls=_positive(data, "max_tool_calls", defaults.max_tool_calls, report),
        max_tokens=_positive(data, "max_tokens", defaults.max_tokens, report),
        max_seconds=float(_positive(data, "max_seconds", int(defaults.max_seconds), report)),
    )


def _positive(data: Mapping[str, Any], key: str, default: int, report: Callable[[str, str], None]) -> int:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        report(f"subagents.{key}", f"must be a positive integer, got {value!r}")
        return default
    return value
