"""`run -m @FILE` reads a text file as the message; a binary one (a program, an image, a PDF) is refused in one
line naming --message, as the file tools refuse one attached with --file: it was sent as 100k tokens of
replacement characters."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from agent_runtime.cli.common import message_text
from agent_runtime.errors import ConfigError
from hypothesis import given, settings
from hypothesis import strategies as st

BINARY_HEADS = [b"\x7fELF\x02\x01\x01\0", b"\x89PNG\r\n\x1a\n\0\0", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n\0", b"PK\x03\x04\0"]


@settings(max_examples=40, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\t\n\r")), cut=st.booleans(),
       head=st.sampled_from(BINARY_HEADS), tail=st.binary(max_size=2000))  # fmt: skip
def test_text_is_the_message_and_a_binary_is_refused(text: str, cut: bool, head: bytes, tail: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "message"
        path.write_bytes(text.encode())
        assert message_text(f"@{path}") == text
        path.write_bytes(head + tail if cut else head + text.encode() + tail)
        with pytest.raises(ConfigError, match=rf"^--message @{path}: not text \(binary\)"):
            message_text(f"@{path}")


def test_a_program_is_refused() -> None:
    with pytest.raises(ConfigError, match="not text"):
        message_text("@/bin/sh")
