"""Workflow definition errors: every problem found, one line each (file, key, why)."""

from __future__ import annotations

from ..errors import ConfigError, Problem

__all__ = ["Problem", "WorkflowError"]


class WorkflowError(ConfigError):
    """A workflow file is missing, unreadable or invalid."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
