"""The CLI reference in docs/cli.md, made from the parser itself: every command, its synopsis and description,
every argument and flag with its help, the examples, and the exit codes (``cli.common.EXIT_MEANINGS``).

    python scripts/cli_reference.py           # rewrite the generated part of docs/cli.md
    python scripts/cli_reference.py --check   # exit 1 when it differs from the parser (tests do this too)

Only the part between the two markers is written: the prose around it is the doc's own. To change what a flag
says, change its ``help`` in ``agent_runtime/cli/`` and run this.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

from agent_runtime.cli import build_parser
from agent_runtime.cli.common import EXIT_MEANINGS

DOC = Path(__file__).resolve().parents[1] / "docs" / "cli.md"
BEGIN = "<!-- generated from the parser by scripts/cli_reference.py: edit the commands' help, then run it -->"
END = "<!-- end of the generated reference -->"


def reference(parser: argparse.ArgumentParser | None = None) -> str:
    """The generated part of docs/cli.md, markers included."""
    parser = parser or build_parser()
    parts = [BEGIN, "", "## Commands", "", _section(parser, [parser.prog], top=True)]
    parts += [_section(sub, path) for sub, path in _commands(parser, [parser.prog])]
    parts += ["## Exit codes", "", "| Code | Meaning | stdout of `run` |", "|---|---|---|"]
    parts += [f"| {code} | {_cell(meaning)} | {_cell(out)} |" for code, _, meaning, out in EXIT_MEANINGS]
    return "\n".join([*parts, "", END])


def _commands(parser: argparse.ArgumentParser, path: list[str]) -> Iterator[tuple[argparse.ArgumentParser, list[str]]]:
    """Every command and sub-command, depth first, in the parser's order."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield sub, [*path, name]
                yield from _commands(sub, [*path, name])


def _arguments(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if not isinstance(a, argparse._HelpAction | argparse._SubParsersAction)]


def _section(parser: argparse.ArgumentParser, path: list[str], *, top: bool = False) -> str:
    lines = [f"### `{' '.join(path)}`", "", "```", _synopsis(parser, path), "```", ""]
    about = parser.description if not top else (parser.description or "").split("\n\n")[0]
    if about:
        lines += [" ".join(about.split()), ""]
    rows = [(_named(a), a.help or "") for a in _arguments(parser)]
    if rows:
        lines += ["| Argument | Meaning |", "|---|---|", *(f"| {_cell(n)} | {_cell(h)} |" for n, h in rows), ""]
    examples = (parser.epilog or "").split("\n\nexit codes")[0].strip() if not top else ""
    if examples:
        lines += ["```", examples, "```", ""]
    return "\n".join(lines)


def _synopsis(parser: argparse.ArgumentParser, path: list[str]) -> str:
    words = [" ".join(path)]
    for action in _arguments(parser):
        word = _usage(action)
        if action.option_strings and not action.required:
            word = f"[{word}]"
        if isinstance(action, argparse._AppendAction):
            word += "..."
        words.append(word)
    if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
        words.append("COMMAND")
    return " ".join(words)


def _usage(action: argparse.Action) -> str:
    """How the argument is written: its shortest flag and value, or the positional's name."""
    if not action.option_strings:
        name = str(action.metavar or action.dest.upper())
        return {"*": f"[{name}...]", "?": f"[{name}]", "+": f"{name}..."}.get(str(action.nargs), name)
    flag = min(action.option_strings, key=len)
    return f"{flag} {_value(action)}" if action.nargs != 0 else flag


def _value(action: argparse.Action) -> str:
    if action.choices is not None:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    return str(action.metavar or action.dest.upper())


def _named(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{_usage(action)}`"
    value = f" {_value(action)}" if action.nargs != 0 else ""
    return ", ".join(f"`{flag}{value}`" for flag in action.option_strings)


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def main(argv: list[str]) -> int:
    text = DOC.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        print(f"{DOC}: the markers of the generated part are missing", file=sys.stderr)
        return 1
    head, rest = text.split(BEGIN, 1)
    updated = head + reference() + rest.split(END, 1)[1]
    if "--check" in argv:
        if updated != text:
            print(f"{DOC} is out of date with the parser: run python scripts/cli_reference.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(updated, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
