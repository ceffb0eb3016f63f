"""What the demo model's answers must never show: the run's internals (file ids, mime types, the engine's lines)."""

from __future__ import annotations

import re

from agent_runtime.files import InMemoryFileStore

ENGINE = ("[context status", "## Files", "virtual file", "user-turn", "Read them with the file tools", "[masked")


def leaks(answer: str, files: InMemoryFileStore) -> list[str]:
    """What of the run's internals the answer shows."""
    found = [meta.id for meta in files.list() if meta.id in answer]
    found += [meta.mimetype for meta in files.list() if meta.mimetype and meta.mimetype in answer]
    found += [mark for mark in ENGINE if mark in answer]
    return found + re.findall(r"\bfile-[0-9a-f]{6,}", answer)


TOOLS = '''\
from pathlib import Path

from agent_runtime import tool


@tool(mutating=True)
def post_comment(ticket: str, text: str) -> str:
    """Post a comment on a ticket.

    Args:
        ticket: The ticket's key, e.g. PAY-1.
        text: The comment.
    """
    (Path(__file__).parent / "posted.txt").open("a").write(f"{ticket}: {text}\\n")
    return f"commented on {ticket} (the real tool)"
'''


WORKFLOW = """\
name: ticket-triage
description: Triage of the payments team's tickets.
prompt: You help the payments team with their tickets.
model: {name: gpt-4.1-mini, context_window: 1047576}
tools:
  python: [payments_tools:post_comment]
"""
