"""Workflow definition errors: every problem found, one line each (file, key, why)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    key: str
    why: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.why}"


class WorkflowError(ConfigError):
    """A workflow file is missing, unreadable or invalid."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
