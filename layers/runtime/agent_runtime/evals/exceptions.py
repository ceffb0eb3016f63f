"""Eval errors: a suite file that cannot be used (user errors, one line per problem)."""

from __future__ import annotations

from ..errors import ConfigError, Problem

__all__ = ["Problem", "SuiteError"]


class SuiteError(ConfigError):
    """An eval suite is missing, unreadable or invalid: every problem, one line each (file: key: why)."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))
