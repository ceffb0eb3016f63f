"""A mistyped option or command is named with what it may have meant (argparse says only "unrecognized
arguments", or, for a required option, that it is missing), and a run id given as a thread is said to be one."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from agent_runtime.cli import build_parser, main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli


def commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """(command path, long option) of every command that runs (the leaves)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(path, s) for s in parser._option_string_actions if s.startswith("--") and s != "--help"]
    return [found for name, sub in subs[0].choices.items() for found in commands(sub, (*path, name))]


OPTIONS = [(path, option) for path, option in commands(build_parser()) if len(option) >= 7]


def said(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    return capsys.readouterr().err


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(found=st.sampled_from(OPTIONS), data=st.data())
def test_a_swapped_pair_in_an_option_is_named_with_the_option(
    found: tuple[tuple[str, ...], str], data: st.DataObject, capsys: pytest.CaptureFixture[str]
) -> None:
    path, option = found
    at = data.draw(st.integers(3, len(option) - 2))  # the dashes kept: a long option still
    typo = option[: at - 1] + option[at] + option[at - 1] + option[at + 1 :]
    known = [s for _, s in commands(build_parser()) if _ == path]
    if typo == option or any(s.startswith(typo) for s in known):
        return  # the same, or a prefix argparse takes as it is
    err = said([*path, typo, "x"], capsys).splitlines()[-1]
    assert f"{typo} (did you mean " in err and err.startswith("agent-runtime")


def test_the_newcomers_typos(capsys: pytest.CaptureFixture[str]) -> None:
    assert said(["runs", "list", "--limt", "3"], capsys).endswith("--limt (did you mean --limit?)\n")
    assert "--mesage (did you mean --message?)" in said(["run", "document-feedback", "--mesage", "hi"], capsys)
    assert said(["runs", "lst"], capsys).endswith("did you mean list?\n")


def test_a_run_id_one_character_off_and_a_run_id_given_as_a_thread_are_said(tmp_path: Path) -> None:
    env = {"AGENT_STATE_DIR": str(tmp_path)}
    first = run_cli("run", "document-feedback", "-m", "hello", "--json", env=env)
    run_id = json.loads(first.stdout)["run_id"]
    shown = run_cli("runs", "show", run_id[:-1], env=env)
    assert shown.returncode == 2 and shown.stderr.rstrip().endswith(f"did you mean {run_id}?")
    again = run_cli("run", "document-feedback", "-m", "and now?", "-t", run_id, env=env)
    assert again.returncode == 0 and "note:" not in again.stderr  # a run without -t is its own thread: it goes on
    assert "hello (from this thread)" in again.stdout
