"""``agent-runtime skills list|validate|show``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..config import RuntimeConfig
from ..errors import ConfigError
from .common import EXIT_USAGE, Commands


def add(commands: Commands) -> None:
    skills = commands.add_parser(
        "skills",
        help="list, validate or show Agent Skills",
        description="Agent Skills (agentskills.io) in the skills folder (AGENT_SKILLS_DIR).",
    )
    sk_commands = skills.add_subparsers(dest="skills_command", metavar="COMMAND", required=True)
    sk_list = sk_commands.add_parser("list", help="list the skills", description="List the skills and what they do.")
    sk_list.add_argument("--json", action="store_true", help="print name, description and path as JSON")
    sk_list.set_defaults(handler=_cmd_list)
    sk_validate = sk_commands.add_parser(
        "validate",
        help="check skills against the spec; exit 2 with one line per problem (file: field: why)",
        description="Check every skill folder strictly against the Agent Skills spec (frontmatter fields, name "
        "rules, description and compatibility lengths, links inside the skill). Exits 2 if anything is wrong.",
    )
    sk_validate.add_argument("dir", nargs="?", metavar="DIR", help="a skills folder (default: AGENT_SKILLS_DIR)")
    sk_validate.set_defaults(handler=_cmd_validate)
    sk_show = sk_commands.add_parser(
        "show", help="print a skill as load_skill returns it", description="Print a skill as load_skill returns it."
    )
    sk_show.add_argument("name", metavar="NAME", help="the skill's name")
    sk_show.set_defaults(handler=_cmd_show)


def _cmd_list(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..skills import SkillLibrary  # yaml: read when a skills command runs

    library = SkillLibrary(config.skills_dir)
    if args.json:
        rows = [{"name": s.name, "description": s.description, "path": str(s.path)} for s in library.skills.values()]
        print(json.dumps(rows, indent=2, ensure_ascii=False))
        return 0
    for skill in library.skills.values():
        print(f"{skill.name:<20} {skill.description}")
    return 0


def _cmd_validate(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..skills import SkillLibrary  # yaml: read when a skills command runs

    library = SkillLibrary(Path(args.dir) if args.dir else config.skills_dir)
    problems = library.validate()
    for problem in problems:
        print(problem, file=sys.stderr)
    bad = {Path(p.file).parent.name for p in problems}
    for name in library.names():
        if name not in bad:
            print(f"ok  {name}")
    return EXIT_USAGE if problems else 0


def _cmd_show(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..skills import SkillLibrary, skill_content

    library = SkillLibrary(config.skills_dir)
    if args.name not in library.skills:
        raise ConfigError(f"no skill named {args.name!r}; available: {', '.join(library.names()) or 'none'}")
    print(skill_content(library, args.name))
    return 0
