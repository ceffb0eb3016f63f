"""The demo model's tests' shared parts: what its answers must never show (file ids, mime types, the engine's lines),
and a payments workflow with a mutating tool of its own, as a person would write them."""

from __future__ import annotations

import re
from pathlib import Path

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


def eval_desk(folder: Path, suite: str) -> dict[str, str]:
    """A folder holding the payments tools, the ticket-triage workflow and an eval suite of it; the CLI's
    environment to run that suite there."""
    for name in ("workflows", "evals", "tools", "state"):
        (folder / name).mkdir()
    (folder / "tools" / "payments_tools.py").write_text(TOOLS)
    (folder / "workflows" / "ticket-triage.yaml").write_text(WORKFLOW)
    (folder / "evals" / "ticket-triage.yaml").write_text(suite)
    return {"AGENT_TOOLS_PATH": str(folder / "tools"), "AGENT_WORKFLOWS_DIR": str(folder / "workflows"),
            "AGENT_EVALS_DIR": str(folder / "evals"), "AGENT_STATE_DIR": str(folder / "state")}  # fmt: skip
