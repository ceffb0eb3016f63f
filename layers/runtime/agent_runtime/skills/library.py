"""Where skills live, and safe access to their files (a provider in the agentskills-core sense).

The library reads one folder: the repo's ``skills/`` locally, a layer or an unpacked S3 prefix in Lambda
(``AGENT_SKILLS_DIR``). Nothing is fetched over the network at cold start.
"""

from __future__ import annotations

import html
import logging
from pathlib import Path

from ..errors import Problem
from .exceptions import SkillAccessError
from .parser import Skill, parse_skill

logger = logging.getLogger(__name__)
MAX_LISTED_FILES = 50
MAX_FILE_BYTES = 256 * 1024
SKIP = {".git", "node_modules", "__pycache__"}


class SkillLibrary:
    """All skills under ``root`` (``root/<name>/SKILL.md``), parsed leniently."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.skills: dict[str, Skill] = {}
        for folder in sorted(p for p in root.iterdir() if p.is_dir() and p.name not in SKIP) if root.is_dir() else []:
            if not (folder / "SKILL.md").is_file():
                continue
            skill, problems = parse_skill(folder, strict=False)
            for problem in problems:
                logger.warning("skill=<%s>, problem=<%s> | skill loaded leniently", folder.name, problem)
            if skill is not None:
                self.skills[skill.name] = skill

    def names(self) -> list[str]:
        return list(self.skills)

    def get(self, name: str) -> Skill:
        skill = self.skills.get(name)
        if skill is None:
            raise SkillAccessError(f"there is no skill named {name!r}")
        return skill

    def files(self, name: str) -> list[str]:
        """The skill's other files (relative paths), for the model to ask for by name."""
        skill = self.get(name)
        found = sorted(
            str(path.relative_to(skill.path))
            for path in skill.path.rglob("*")
            if path.is_file() and path.name != "SKILL.md" and not SKIP & set(path.parts)
        )
        return found[:MAX_LISTED_FILES]

    def read(self, name: str, relative: str) -> str:
        """One file of a skill. Refuses anything that would leave the skill's folder."""
        skill = self.get(name)
        try:  # the file system's own errors name the host path: the model sees the path it gave, and why
            return self._read(name, skill.path, relative)
        except (OSError, RuntimeError) as error:  # RuntimeError: a symlink loop, before Python 3.13
            why = getattr(error, "strerror", None) or "a symlink loop"
            raise SkillAccessError(f"{relative[:200]!r} cannot be read: {why}") from None

    def _read(self, name: str, folder: Path, relative: str) -> str:
        path = _inside(folder, relative)
        if not path.is_file():
            raise SkillAccessError(f"skill {name!r} has no file {relative!r}; its files: {', '.join(self.files(name))}")
        if path.stat().st_size > MAX_FILE_BYTES:
            raise SkillAccessError(f"{relative!r} is over {MAX_FILE_BYTES // 1024} KB; skills keep files small")
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise SkillAccessError(f"{relative!r} is not text; binary assets cannot be shown") from None

    def catalog(self, names: list[str]) -> str:
        """The tier-1 catalog in the spec's recommended XML shape (name and description only)."""
        if not names:
            return ""
        rows = []
        for name in names:
            skill = self.get(name)
            rows.append(
                f"<skill>\n<name>{html.escape(name)}</name>\n<description>{html.escape(skill.description)}"
                "</description>\n</skill>"
            )
        return "<available_skills>\n" + "\n".join(rows) + "\n</available_skills>"

    def validate(self) -> list[Problem]:
        """Strict problems for every skill folder (for ``agent-runtime skills validate``)."""
        if not self.root.is_dir():
            return [Problem(str(self.root), "(folder)", "no such skills folder")]
        problems: list[Problem] = []
        for folder in sorted(p for p in self.root.iterdir() if p.is_dir() and p.name not in SKIP):
            if not (folder / "SKILL.md").is_file():
                problems.append(Problem(str(folder), "SKILL.md", "missing: every skill folder needs one"))
                continue
            problems += parse_skill(folder, strict=True)[1]
        return problems


def _inside(folder: Path, relative: str) -> Path:
    """Resolve ``relative`` inside ``folder``; refuse absolute paths, '..', NUL, backslashes and symlinks out."""
    if not relative or "\0" in relative or "\\" in relative or relative.startswith(("/", "~")):
        raise SkillAccessError(f"refused path {relative!r}: give a path relative to the skill folder")
    if ".." in Path(relative).parts:
        raise SkillAccessError(f"refused path {relative!r}: '..' may not leave the skill folder")
    base = folder.resolve()
    path = (folder / relative).resolve()  # follows symlinks, so a link pointing out is caught here
    if not path.is_relative_to(base):
        raise SkillAccessError(f"refused path {relative!r}: it resolves outside the skill folder")
    return path
