"""``SKILL.md`` parsing per the Agent Skills spec: lenient when loading, strict when validating.

The spec defines six frontmatter fields. Strict mode (``agent-runtime skills validate``) reports every breach,
using the interoperable ASCII name rule. Lenient mode (run time) follows the spec's client guide: it loads a skill
whose name or extra fields are off, with a warning, and skips only a skill with no description or unreadable YAML.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..errors import Problem

SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when the wheel has it (~5x faster)

FIELDS = ("name", "description", "license", "compatibility", "metadata", "allowed-tools")
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
LINK = re.compile(r"\]\((?!https?://|#|mailto:)([^)\s]+)\)")
MAX_BODY_LINES = 500


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    path: Path  # the skill's folder
    body: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: str | None = None


def split_frontmatter(text: str) -> tuple[str, str] | None:
    """(frontmatter, body), or None when the file does not start with a ``---`` block."""
    lines = text.lstrip("\ufeff").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    for index in range(1, len(lines)):
        if lines[index].strip() == "---":
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    return None


def _load_yaml(front: str) -> dict[str, Any] | None:
    try:
        data = yaml.load(front, Loader=SAFE_LOADER)
    except yaml.YAMLError:
        data = _colon_fallback(front)
    return data if isinstance(data, dict) else None


def _colon_fallback(front: str) -> dict[str, Any] | None:
    # The client guide: tolerate unquoted colons in values ("description: Use it: always").
    data: dict[str, Any] = {}
    for line in front.splitlines():
        if not line.strip():
            continue
        key, sep, value = line.partition(":")
        if not sep or line.startswith((" ", "\t")):
            return None
        data[key.strip()] = value.strip()
    return data or None


def parse_skill(folder: Path, *, strict: bool) -> tuple[Skill | None, list[Problem]]:
    """Read ``folder/SKILL.md``. Returns the skill (None when unusable) and the problems found."""
    path = folder / "SKILL.md"
    where = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        return None, [Problem(where, "(file)", f"cannot read: {error}")]
    parts = split_frontmatter(text)
    if parts is None:
        return None, [Problem(where, "(frontmatter)", "must start with a '---' line and close with another")]
    data = _load_yaml(parts[0])
    if data is None:
        return None, [Problem(where, "(frontmatter)", "is not a YAML mapping")]
    problems = _check(data, folder, where, parts[1], strict=strict)
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        return None, problems
    metadata = data.get("metadata")
    metadata = metadata if isinstance(metadata, dict) else {}
    skill = Skill(
        name=str(data.get("name") or folder.name),
        description=description.strip(),
        path=folder,
        body=parts[1].strip(),
        license=_text_or_none(data.get("license")),
        compatibility=_text_or_none(data.get("compatibility")),
        metadata={str(k): str(v) for k, v in metadata.items()},
        allowed_tools=_text_or_none(data.get("allowed-tools")),
    )
    return skill, problems


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _check(data: dict[str, Any], folder: Path, where: str, body: str, *, strict: bool) -> list[Problem]:
    problems = [
        Problem(where, str(key), f"unknown field; the spec allows {', '.join(FIELDS)}")
        for key in data
        if key not in FIELDS
    ]
    name = data.get("name")
    if not isinstance(name, str) or not name:
        problems.append(Problem(where, "name", "is required"))
    else:
        if len(name) > 64 or not NAME.fullmatch(name):
            problems.append(Problem(where, "name", "use 1-64 lowercase letters, digits and single hyphens (a-z, 0-9)"))
        if name != folder.name:
            problems.append(Problem(where, "name", f"must equal the folder name {folder.name!r}"))
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        problems.append(Problem(where, "description", "is required (1-1024 characters)"))
    elif len(description) > 1024:
        problems.append(Problem(where, "description", f"is {len(description)} characters; the limit is 1024"))
    problems += _check_optional(data, where)
    if strict:
        problems += _check_body(body, folder, where)
    return problems


def _check_optional(data: dict[str, Any], where: str) -> list[Problem]:
    problems = []
    compatibility = data.get("compatibility")
    if compatibility is not None and (not isinstance(compatibility, str) or not 1 <= len(compatibility) <= 500):
        problems.append(Problem(where, "compatibility", "must be a string of 1-500 characters"))
    metadata = data.get("metadata")
    if metadata is not None and (
        not isinstance(metadata, dict) or not all(isinstance(v, str | int | float) for v in metadata.values())
    ):
        problems.append(Problem(where, "metadata", "must map keys to string values"))
    for key in ("license", "allowed-tools"):
        if key in data and not isinstance(data[key], str):
            problems.append(Problem(where, key, "must be a string"))
    return problems


def _check_body(body: str, folder: Path, where: str) -> list[Problem]:
    problems = []
    if not body.strip():
        problems.append(Problem(where, "(body)", "is empty: the instructions are the skill"))
    if body.count("\n") > MAX_BODY_LINES:
        problems.append(Problem(where, "(body)", f"has over {MAX_BODY_LINES} lines; move detail to references/"))
    for target in LINK.findall(body):
        relative = target.split("#", 1)[0]
        if relative and not (folder / relative).resolve().is_relative_to(folder.resolve()):
            problems.append(Problem(where, "(body)", f"link {target!r} points outside the skill folder"))
        elif relative and not (folder / relative).exists():
            problems.append(Problem(where, "(body)", f"link {target!r}: no such file in the skill folder"))
    return problems
