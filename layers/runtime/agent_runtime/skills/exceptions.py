"""Skill errors: invalid skill folders (config) and refused requests from the model (tool errors)."""

from __future__ import annotations

from ..errors import ConfigError, Problem, ToolError


class SkillError(ConfigError):
    """A skill or the skills folder is invalid; ``problems`` has one entry per problem."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = problems
        super().__init__("\n".join(str(p) for p in problems))


class SkillAccessError(ToolError):
    """The model asked for a skill or file it may not have (unknown, prohibited, or outside the skill)."""
