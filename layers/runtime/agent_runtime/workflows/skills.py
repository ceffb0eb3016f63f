"""The workflow's ``skills:`` section: which skills are loaded at start, offered, or never shown."""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from ..sections import check_keys

KEYS = ("required", "allowed", "prohibited")


@dataclass(frozen=True, slots=True)
class SkillPolicy:
    required: tuple[str, ...] = ()  # loaded into the system prompt at start
    allowed: tuple[str, ...] | None = None  # in the catalog; None means every skill
    prohibited: tuple[str, ...] = ()  # never shown; load_skill refuses them

    def visible(self, names: Collection[str]) -> list[str]:
        """Skills this workflow may use, in library order (required ones included)."""
        return [
            name
            for name in names
            if name not in self.prohibited and (self.allowed is None or name in self.allowed or name in self.required)
        ]


def parse_skills_section(
    data: Mapping[str, Any], report: Callable[[str, str], None], known: Collection[str] | None
) -> SkillPolicy:
    check_keys("skills", data, KEYS, report)
    lists = {key: _names(data, key, report, known) for key in KEYS}
    for name in set(lists["required"] or ()) & set(lists["prohibited"] or ()):
        report("skills.prohibited", f"{name!r} is also required")
    for name in set(lists["allowed"] or ()) & set(lists["prohibited"] or ()):
        report("skills.prohibited", f"{name!r} is also allowed")
    return SkillPolicy(
        required=tuple(lists["required"] or ()),
        allowed=None if "allowed" not in data else tuple(lists["allowed"] or ()),
        prohibited=tuple(lists["prohibited"] or ()),
    )


def _names(
    data: Mapping[str, Any], key: str, report: Callable[[str, str], None], known: Collection[str] | None
) -> list[str] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        report(f"skills.{key}", "must be a list of skill names")
        return None
    if known is not None:
        for name in value:
            if name not in known:
                report(f"skills.{key}", f"unknown skill {name!r}; available: {', '.join(sorted(known)) or 'none'}")
    return value
