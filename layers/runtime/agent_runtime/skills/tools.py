"""``load_skill`` and ``load_skill_file``, built per workflow so the model sees only the skills it may use."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from ..events import SkillLoaded
from ..run_context import RunContext
from ..state import Slot
from ..tools import Tool, tool
from ..workflows.skills import SkillPolicy
from .exceptions import SkillAccessError
from .library import SkillLibrary

LOADED: Slot[list[str]] = Slot("skills_loaded", list, owner=__name__)  # skills loaded on demand


def skill_files(library: SkillLibrary, policy: SkillPolicy) -> Callable[[RunContext, str], tuple[str, bytes]]:
    """For the ``python`` tool: a loaded skill's file by reference (``skill/scripts/x.py``), so the model runs a
    skill's script without pasting it. Same rule as ``load_skill_file``: the skill must be loaded (or required)."""

    def read(ctx: RunContext, ref: str) -> tuple[str, bytes]:
        name, _, path = ref.partition("/")
        if name not in policy.visible(library.names()):
            raise SkillAccessError(f"{ref!r}: no skill {name!r} is available to this workflow")
        if name not in policy.required and name not in LOADED.get(ctx.state):
            raise SkillAccessError(f"load the skill first: load_skill(name={name!r})")
        return f"skills/{name}/{path}", library.read(name, path).encode("utf-8")

    return read


def skill_content(library: SkillLibrary, name: str) -> str:
    """A skill's instructions, wrapped as the spec's client guide suggests, with its files listed (not read)."""
    skill = library.get(name)
    files = library.files(name)
    listed = "\n".join(f"<file>{path}</file>" for path in files)
    resources = f"\n<skill_resources>\n{listed}\n</skill_resources>" if files else ""
    hint = f'\nRead a file with load_skill_file(name="{name}", path=...).' if files else ""
    return f'<skill_content name="{name}">\n{skill.body}\n</skill_content>{resources}{hint}'


def skill_tools(library: SkillLibrary, policy: SkillPolicy) -> list[Tool]:
    """The two tools, or none when the workflow may use no skill (an empty catalog offers nothing)."""
    names = policy.visible(library.names())
    if not names:
        return []
    choices: Any = Literal[tuple(names)]  # the schema's enum: prohibited and unknown names cannot even be sent

    def load_skill(ctx: RunContext, name: str) -> str:
        """Load a skill's instructions (from the available_skills catalog) before doing the task it describes.

        Args:
            name: The skill's name, exactly as in the catalog.
        """
        loaded = LOADED.use(ctx.state)
        if name in policy.required or name in loaded:
            return f"Skill {name!r} is already loaded: its instructions are in your context. Follow them."
        loaded.append(name)
        if ctx.report is not None:
            ctx.report(SkillLoaded(skill=name))
        return skill_content(library, name)

    def load_skill_file(ctx: RunContext, name: str, path: str) -> str:
        """Read one of a loaded skill's files (listed under skill_resources), such as references/examples.md.

        Args:
            name: The skill's name.
            path: The file's path relative to the skill folder, as listed.
        """
        if name not in policy.required and name not in LOADED.get(ctx.state):
            raise SkillAccessError(f"load the skill first: load_skill(name={name!r})")
        return f'<skill_file skill="{name}" path="{path}">\n{library.read(name, path)}\n</skill_file>'

    # Real objects instead of string annotations: the enum is built at run time from the workflow's policy.
    load_skill.__annotations__ = {"ctx": RunContext, "name": choices, "return": str}
    load_skill_file.__annotations__ = {"ctx": RunContext, "name": choices, "path": str, "return": str}
    tools = [tool(load_skill, pinned=True, offload=False), tool(load_skill_file, pinned=True, offload=False)]
    for item in tools:  # one allowed skill renders as "const"; an explicit enum is understood everywhere
        prop = item.parameters["properties"]["name"]
        prop.pop("const", None)
        prop.update({"type": "string", "enum": names})
    return tools
