"""Markdown → Slack mrkdwn, for answers from models that write Markdown despite the slack-formatting skill.

Conservative: only what Slack would otherwise show wrongly (``**bold**``, ``# headings``, ``[text](url)``,
``__bold__``), and never inside code spans or fenced code blocks, which Slack renders as written.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"(```.*?```|`[^`\n]+`)", re.DOTALL)
_RULES = (
    (re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE), r"*\1*"),  # headings: mrkdwn has none
    (re.compile(r"\*\*(.+?)\*\*"), r"*\1*"),
    (re.compile(r"(?<![\w_])__(.+?)__(?![\w_])"), r"*\1*"),
    (re.compile(r"\[([^\]\n]+)\]\((https?://[^)\s]+)\)"), r"<\2|\1>"),
    (re.compile(r"^(\s*)[-*]\s+", re.MULTILINE), r"\1• "),  # list markers Slack shows literally
)


def to_mrkdwn(text: str) -> str:
    parts = _FENCE.split(text)
    for index in range(0, len(parts), 2):  # even parts are outside code
        for pattern, replacement in _RULES:
            parts[index] = pattern.sub(replacement, parts[index])
    return "".join(parts)
