"""A run id (or thread id) given on the command line that is no id — a path, empty, huge, unicode, a newline — is
refused at the door: exit 2 and one short line, nothing looked up in the store (an OS error on a 5,000-character
file name had echoed the id twice, 10 KB on one line, as a run's failure)."""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_runtime.cli import main
from agent_runtime.ids import RUN_ID
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

COMMANDS = (
    ("runs", "show", "{}"),
    ("runs", "stop", "{}"),
    ("runs", "link", "{}"),
    ("runs", "chart", "-o", "chart.svg", "{}"),
    ("eval", "add", "document-feedback", "--from-run", "{}"),
    ("run", "document-feedback", "-m", "hi", "-t", "{}"),
)
KNOWN = ["", "../outside", "run-../../etc/passwd", "a/b", "run-1\n", " run-1", "rün-1", "a" * 5000]
HOSTILE = st.one_of(
    st.sampled_from(KNOWN),
    st.text(min_size=1, max_size=300).filter(lambda t: not RUN_ID.fullmatch(t) and not t.startswith("-")),
)


@pytest.fixture(autouse=True)
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("AGENT_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("given_id", KNOWN)
@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_refuses_a_path_an_empty_or_a_huge_id(
    given_id: str, command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    refused(given_id, command, capsys)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(given_id=HOSTILE, command=st.sampled_from(COMMANDS))
def test_an_id_that_is_no_id_is_refused_in_one_short_line(
    given_id: str, command: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    refused(given_id, command, capsys)


def refused(given_id: str, command: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    code = main([given_id if part == "{}" else part for part in command])
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert len(err.splitlines()) == 1 and len(err) < 400, err[:600]
    assert "no stored run" not in err, err  # refused before any look-up
