"""AGENT_STATE_DIR checked before a command opens the local store: a file in its place, or anywhere above it, is a
config error naming the variable (exit 2, one line); a folder that can be made is made, and nothing else is."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.errors import ConfigError
from hypothesis import given, settings
from hypothesis import strategies as st

segments = st.lists(st.from_regex(r"[a-z0-9._-]{1,12}", fullmatch=True).filter(lambda s: s not in (".", "..")),
                    min_size=0, max_size=3)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(below=segments, create=st.booleans())
def test_a_file_at_or_above_the_state_dir_is_a_config_error(below: list[str], create: bool) -> None:
    with tempfile.TemporaryDirectory() as root:
        a_file = Path(root) / "a-file"
        a_file.write_text("kept")
        state = a_file.joinpath(*below)
        config = RuntimeConfig(workflows_dir=Path(root), state_dir=state)
        with pytest.raises(ConfigError, match=r"^AGENT_STATE_DIR=.*: not a directory"):
            config.usable_state_dir(create=create)
        assert a_file.read_text() == "kept" and sorted(Path(root).iterdir()) == [a_file]


@settings(max_examples=40, deadline=None)
@given(below=segments.filter(bool), create=st.booleans())
def test_a_folder_that_can_be_made_is_made_only_when_asked(below: list[str], create: bool) -> None:
    with tempfile.TemporaryDirectory() as root:
        state = Path(root).joinpath(*below)
        assert RuntimeConfig(workflows_dir=Path(root), state_dir=state).usable_state_dir(create=create) == state
        assert state.is_dir() is create
