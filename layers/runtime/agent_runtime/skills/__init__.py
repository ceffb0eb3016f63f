"""Agent Skills (agentskills.io): a library of skill folders, per-workflow policy, and on-demand loading."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..workflows.skills import SkillPolicy, parse_skills_section
    from .exceptions import SkillAccessError, SkillError
    from .library import SkillLibrary
    from .parser import Skill, parse_skill
    from .tools import skill_content, skill_tools

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "SkillAccessError": ".exceptions",
        "SkillError": ".exceptions",
        "SkillLibrary": ".library",
        "Skill": ".parser",
        "parse_skill": ".parser",
        "SkillPolicy": "..workflows.skills",
        "parse_skills_section": "..workflows.skills",
        "skill_content": ".tools",
        "skill_tools": ".tools",
    },
)


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
