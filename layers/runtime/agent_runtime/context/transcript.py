"""Readable transcripts of a window: the archive file, and the (bounded) input of the summary call.

Every message gets a header line with its index, so a summary can cite ``archive lines a-b`` and a later
``file_read`` lands exactly on the detail that was dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import messages as msgs
from ..messages import Message, text_of
from .counter import TokenCounter
from .history import FOLD_MARK


@dataclass(frozen=True, slots=True)
class Transcript:
    text: str
    spans: list[tuple[int, int]]  # per message: first and last line in ``text`` (1-based)


def _heading(index: int, message: Message, tool_names: dict[str, str]) -> str:
    role = message["role"]
    if role == "tool":
        call_id = message.get("tool_call_id", "")
        return f"## [{index}] tool result of {tool_names.get(call_id, '?')} ({call_id})"
    if role == "user" and text_of(message).startswith(FOLD_MARK):
        return f"## [{index}] assistant's earlier turns, folded"  # the engine's message, not the person's
    calls = message.get("tool_calls", [])
    if calls:
        listed = "; ".join(f"{c['function']['name']}({c['function']['arguments']})" for c in calls)
        return f"## [{index}] {role} · tool calls: {listed}"
    return f"## [{index}] {role}"


Brief = Callable[[str], str]  # a tool's result as the summary call reads it


def render(
    messages: list[Message],
    *,
    title: str,
    counter: TokenCounter | None = None,
    clip: int = 0,
    briefs: Mapping[str, Brief] | None = None,
) -> Transcript:
    """One section per message. With ``clip`` > 0 (tokens), long bodies are cut and point at the archive;
    ``briefs``: tools whose results read shorter (what the window will carry in another form)."""
    tool_names = msgs.tool_names(messages)
    lines = [title]
    spans: list[tuple[int, int]] = []
    for index, message in enumerate(messages):
        first = len(lines) + 1
        lines.append(_heading(index, message, tool_names))
        body = text_of(message)
        brief = (
            (briefs or {}).get(tool_names.get(message.get("tool_call_id", ""), ""))
            if message["role"] == "tool"
            else None
        )
        body = brief(body) if brief else body
        if clip and counter is not None and len(body) > clip and counter.text(body) > clip:
            body = counter.truncate(body, clip) + "\n[... cut here; the full text is in the archive]"
        lines.extend(body.splitlines() or [""])
        spans.append((first, len(lines)))
    return Transcript("\n".join(lines) + "\n", spans)
