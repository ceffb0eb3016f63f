"""Agent Skills (agentskills.io): a library of skill folders, per-workflow policy, and on-demand loading."""

from __future__ import annotations

from .exceptions import SkillAccessError, SkillError
from .library import SkillLibrary
from .parser import Skill, parse_skill
from .policy import SkillPolicy, parse_skills_section
from .tools import skill_content, skill_tools

__all__ = [
    "Skill",
    "SkillAccessError",
    "SkillError",
    "SkillLibrary",
    "SkillPolicy",
    "parse_skill",
    "parse_skills_section",
    "skill_content",
    "skill_tools",
]
