"""``make help`` lists every documented target with its description in one column, however long the longest name
(the column had been 12 wide: a longer name pushed its description out of line)."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO

NAME = st.from_regex(r"[a-z][a-z0-9_-]{0,39}", fullmatch=True)
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine")


def listed(*extra: Path) -> list[str]:
    files = [arg for path in (REPO / "Makefile", *extra) for arg in ("-f", str(path))]
    # PYTHON and LAMBDA_PYTHON given: the Makefile's search for interpreters is not what this reads
    done = subprocess.run(["make", "-s", *files, "help", "PYTHON=python3", "LAMBDA_PYTHON=python3"], cwd=REPO,
                          capture_output=True, text=True, timeout=30, check=True)  # fmt: skip
    return [COLOUR.sub("", line) for line in done.stdout.splitlines()]


def test_the_repositorys_targets_line_up() -> None:
    lines = listed()
    assert any(line.split()[0] == "oauth-provider" for line in lines)  # longer than the old column
    starts = {len(line) - len(line.split(None, 1)[1]) for line in lines}
    assert len(starts) == 1, "\n".join(lines)


@settings(max_examples=8, deadline=None)
@given(names=st.lists(NAME, min_size=1, max_size=4, unique=True))
def test_any_target_names_line_up(names: list[str]) -> None:
    with tempfile.TemporaryDirectory() as folder:
        extra = Path(folder) / "extra.mk"
        extra.write_text("".join(f"{name}: ## does {name}\n" for name in names))
        lines = listed(extra)
    width = max(len(line.split()[0]) for line in lines)
    for name in names:
        assert any(line.startswith(f"  {name.ljust(width)}  does {name}") for line in lines), "\n".join(lines)
    assert len({line.index(line.split(None, 1)[1]) for line in lines}) == 1, "\n".join(lines)
