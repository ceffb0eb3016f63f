"""Text from a run made inert for the person who reads it, one function per medium: a terminal (``terminal``), an
HTML page (``html``), a line of Slack mrkdwn (``mrkdwn``) and JSON printed to a terminal (``json_text``).

A run's text is anyone's: a tool's result, an MCP server's tool name, a script's error. Shown as it is, an escape
sequence rewrites a terminal (OSC 52 writes the clipboard), a bidi override or isolate reorders what a person
reads (U+202E shows ``exe.txt`` for ``txt.exe``), markup becomes a page's. Each of these characters is shown as
its escape instead (``\\x1b``, ``\\u202e``): visible, and nothing more. Newlines and tabs stay."""

from __future__ import annotations

import html as _html
import json
import re
from typing import Any

# C0 but the newline and tab, DEL, C1; the bidi marks, embeddings, overrides and isolates, and the line and
# paragraph separators; the surrogates and non-characters no page or terminal can carry.
_NONCHARACTERS = "".join(chr(plane * 0x10000 + low) for plane in range(1, 17) for low in (0xFFFE, 0xFFFF))
UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
    f"\ud800-\udfff\ufdd0-\ufdef\ufffe\uffff{_NONCHARACTERS}]"
)


def _escape(found: re.Match[str]) -> str:
    code = ord(found[0])
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def terminal(text: str) -> str:
    """For a terminal: every character that could steer it or reorder the line shown as its escape."""
    return UNSAFE.sub(_escape, text)


def html(text: str) -> str:
    """For an HTML page's text (an element's or an attribute's): inert as on a terminal, and escaped."""
    return _html.escape(terminal(text), quote=True)


def mrkdwn(text: str) -> str:
    """For a line of Slack mrkdwn: inert, no markup of its own (a name cannot ping a channel or embolden)."""
    return terminal(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("*", "")


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """``value`` as JSON for a terminal: the same data (the unsafe characters as JSON's own ``\\uXXXX`` escapes, so
    a reader parses exactly what was stored), nothing that steers the terminal."""
    dumped = json.dumps(value, indent=indent, ensure_ascii=False)
    return UNSAFE.sub(lambda found: json.dumps(found[0])[1:-1], dumped)
