"""The workflow's ``subagents:`` section: whether children may be started, with which models, within what."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..sections import Report, check_keys, flag, integer

KEYS = ("enabled", "models", "max_depth", "max_tool_calls", "max_tokens", "max_seconds")


@dataclass(frozen=True, slots=True)
class SubagentSettings:
    enabled: bool = False
    models: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))  # name -> context window
    max_depth: int = 1  # 1: the workflow's agent may start children, children may not start their own
    max_tool_calls: int = 20  # per child, and never more than the parent has left
    max_tokens: int = 200_000  # total tokens (prompt + completion) per child
    max_seconds: float = 300.0  # per child, and never past the parent's deadline


def parse_subagents_section(data: Mapping[str, Any], report: Report) -> SubagentSettings:
    check_keys("subagents", data, KEYS, report)
    models = data.get("models", {})
    if not isinstance(models, Mapping) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 1024 for k, v in models.items()
    ):
        report("subagents.models", "must map model names to their context window (an integer >= 1024)")
        models = {}
    defaults = SubagentSettings()
    return SubagentSettings(
        enabled=flag("subagents", data, "enabled", report),
        models=MappingProxyType(dict(models)),
        max_depth=integer("subagents", data, "max_depth", defaults.max_depth, report),
        max_tool_calls=integer("subagents", data, "max_tool_calls", defaults.max_tool_calls, report),
        max_tokens=integer("subagents", data, "max_tokens", defaults.max_tokens, report),
        max_seconds=float(integer("subagents", data, "max_seconds", int(defaults.max_seconds), report)),
    )
