"""docs/architecture.md names every package and every top-level module of agent_runtime: a module added without
its line in the map fails here, so the map stays drawn from the code."""

from __future__ import annotations

from tests.conftest import REPO

PACKAGE = REPO / "layers" / "runtime" / "agent_runtime"


def test_the_architecture_names_every_package_and_module() -> None:
    text = (REPO / "docs" / "architecture.md").read_text()
    packages = [p.name + "/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    modules = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "py.typed")]
    assert [name for name in [*packages, *modules] if name not in text] == []


def section(text: str, heading: str) -> str:
    """The paragraph of the doc that starts with the bold heading, up to the next list item."""
    start = text.index(heading)
    end = min((i for i in (text.find("\n* ", start + 1), text.find("\n3. ", start + 1)) if i > 0), default=len(text))
    return text[start:end]


def test_the_lists_of_the_architecture_are_the_codes() -> None:
    """The hooks, the kinds of queue message and the worker's outcomes, each named and counted: was, eleven hooks
    counted (twelve exist) and six of eight message kinds named."""
    import typing

    from agent_runtime.hooks import Hook
    from agent_runtime.service.outcome import Outcome
    from agent_runtime.triggers.queued import QueueMessage

    text = (REPO / "docs" / "architecture.md").read_text()
    hooks = [name for name in vars(Hook) if not name.startswith("_")]
    kinds = [kind.__name__ for kind in typing.get_args(QueueMessage)]
    outcomes = [str(outcome) for outcome in Outcome]
    for heading, names in (("**Hooks**", hooks), ("**Message\n   kinds**", kinds), ("**Outcome**", outcomes)):
        said = section(text, heading)
        assert f"{len(names)})" in said, heading
        assert [name for name in names if f"`{name}`" not in said] == [], heading


def test_the_cli_reference_names_every_command() -> None:
    """docs/cli.md is generated from the parser (scripts/cli_reference.py; test_cli_reference checks it whole):
    here, that every command the parser has is a heading there."""
    import argparse

    from agent_runtime.cli import build_parser

    def commands(parser: argparse.ArgumentParser, prefix: str) -> list[str]:
        found = []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    found += [f"{prefix} {name}", *commands(sub, f"{prefix} {name}")]
        return found

    reference = (REPO / "docs" / "cli.md").read_text()
    assert [c for c in commands(build_parser(), "agent-runtime") if f"### `{c}`" not in reference] == []
