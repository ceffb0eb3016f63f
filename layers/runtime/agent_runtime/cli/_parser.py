"""The command line's parser: argparse's, with a mistyped option named beside what it may have meant. argparse says
``unrecognized arguments: --limt 3`` with the top-level usage, or, when the typo was of a required option, only that
the option is missing (``--mesage hi`` → "the following arguments are required: -m/--message")."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Sequence
from typing import NoReturn


class Parser(argparse.ArgumentParser):
    given: Sequence[str] = ()  # the command line being parsed (set by main: an error does not see it)

    def error(self, message: str) -> NoReturn:
        command = self._command(Parser.given)
        hints = [f"{typo} (did you mean {meant}?)" for typo, meant in _mistyped(command, Parser.given)]
        hints += _choice(message)
        if hints:
            message = f"{message}; {', '.join(hints)}"
        command.print_usage()
        command.exit(2, f"{command.prog}: error: {message}\n")

    def _command(self, argv: Sequence[str]) -> argparse.ArgumentParser:
        """The (sub)command the words of the line name, from this parser down."""
        found: argparse.ArgumentParser = self
        for word in argv:
            if word.startswith("-"):
                continue
            choices = next((a.choices for a in found._actions if isinstance(a, argparse._SubParsersAction)), None)
            if isinstance(choices, dict) and word in choices:
                found = choices[word]
        return found


def _choice(message: str) -> list[str]:
    """argparse's "invalid choice: 'lst' (choose from ...)": the choice it is closest to."""
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if found is None:
        return []
    close = difflib.get_close_matches(found.group(1), re.findall(r"'([^']*)'", found.group(2)), n=1, cutoff=0.6)
    return [f"did you mean {close[0]}?"] if close else []


def _mistyped(command: argparse.ArgumentParser, argv: Sequence[str]) -> list[tuple[str, str]]:
    """Each option on the line the command does not have, with the one of its options it is closest to."""
    known = [s for s in command._option_string_actions if s.startswith("--")]
    found = []
    for word in argv:
        name = word.split("=", 1)[0]
        if name.startswith("--") and name not in command._option_string_actions:
            close = difflib.get_close_matches(name, known, n=1, cutoff=0.7)
            found += [(name, close[0])] if close else []
    return found
