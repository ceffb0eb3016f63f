"""docs/cli.md is the CLI's one reference, made from the parser: every command and flag is in it, nothing in it is
stale, every exit code the CLI returns has its row, and no other page keeps a copy of the synopsis to drift."""

from __future__ import annotations

import argparse
import importlib.util
import re
from types import ModuleType

from agent_runtime.cli import build_parser
from agent_runtime.cli import common as cli_common

from tests.conftest import REPO

DOC = REPO / "docs" / "cli.md"


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("cli_reference", REPO / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def generated() -> str:
    text = DOC.read_text(encoding="utf-8")
    made = generator()
    return made.BEGIN + text.split(made.BEGIN, 1)[1].split(made.END, 1)[0] + made.END


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> dict[tuple[str, ...], list[str]]:
    """Each command path → its option strings, the way a person types them."""
    found = {path: [s for a in parser._actions for s in a.option_strings if s not in ("-h", "--help")]}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found |= commands(sub, (*path, name))
    return found


def test_the_reference_is_what_the_parser_says() -> None:
    assert generated() == generator().reference(), "docs/cli.md is stale: run python scripts/cli_reference.py"


def test_every_command_and_flag_is_in_the_reference_and_nothing_else_is() -> None:
    text = generated()
    parser = commands(build_parser())
    headings = set(re.findall(r"^### `agent-runtime ?([^`]*)`$", text, re.M))
    assert headings == {" ".join(path) for path in parser}
    for path, flags in parser.items():
        section = text.split(f"### `{' '.join(('agent-runtime', *path))}`\n", 1)[1].split("\n### ", 1)[0]
        table = section.split("| Argument | Meaning |", 1)[-1].split("\n\n", 1)[0] if flags else ""
        named = set(re.findall(r"`(--?[a-z][a-z-]*)", table))
        assert named == set(flags), (path, named ^ set(flags))  # each flag of the command, and no other
    flags = {flag for options in parser.values() for flag in options}
    stale = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", text)) - flags
    assert not stale, f"flags the CLI no longer has: {sorted(stale)}"


def test_every_argument_says_what_it_is() -> None:
    def empty(parser: argparse.ArgumentParser, path: str) -> list[str]:
        found = [f"{path} {a.dest}" for a in parser._actions if not (a.help or "").strip()]
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += empty(sub, f"{path} {name}")
        groups = ("workflows", "skills", "runs", "sandbox", "oauth")
        return [f for f in found if not f.endswith((" command", *(f" {group}_command" for group in groups)))]

    assert empty(build_parser(), "agent-runtime") == []


def test_every_exit_code_the_cli_returns_has_one_row() -> None:
    table = generated().split("## Exit codes", 1)[1]
    rows = [int(code) for code in re.findall(r"^\| (\d+) \|", table, re.M)]
    assert rows == sorted(set(rows))  # one row each, in order
    returned = set(cli_common.EXIT_CODES.values())
    returned |= {v for k, v in vars(cli_common).items() if k.startswith("EXIT_") and isinstance(v, int)}
    source = "\n".join(p.read_text() for p in (REPO / "layers/runtime/agent_runtime/cli").glob("*.py"))
    returned |= {int(n) for n in re.findall(r"\breturn (\d+)\b", source)}
    assert returned <= set(rows), f"exit codes without a row in EXIT_MEANINGS: {sorted(returned - set(rows))}"


def test_no_other_page_keeps_a_copy_of_the_synopsis() -> None:
    """The README and the configuration page point at docs/cli.md; neither lists commands with their flags."""
    for page in (REPO / "README.md", REPO / "docs" / "configuration.md"):
        text = page.read_text(encoding="utf-8")
        assert "cli.md" in text, page
        blocks = re.findall(r"```\n(.*?)```", text, re.S)  # untyped fences: where a synopsis was kept
        assert not [b for b in blocks if re.search(r"^agent-runtime [a-z]+ .*\[--", b, re.M)], page
    assert "Exit codes:" not in (REPO / "README.md").read_text()
