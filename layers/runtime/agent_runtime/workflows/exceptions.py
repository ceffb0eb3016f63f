"""Workflow definition errors: every problem found, one line each (file, key, why)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..errors import ConfigError, Problem

if TYPE_CHECKING:
    from .tools import ToolSettings

__all__ = ["Problem", "WorkflowError"]


class WorkflowError(ConfigError):
    """A workflow file is missing, unreadable or invalid. ``tools``: its tools section, when that section read
    without a problem of its own (``workflows validate`` checks its tools too: every problem of a file at once)."""

    def __init__(self, problems: list[Problem], tools: ToolSettings | None = None) -> None:
        self.problems, self.tools = problems, tools
        super().__init__("\n".join(str(p) for p in problems))
