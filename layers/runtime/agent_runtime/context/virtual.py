"""Virtual files: a large user message or tool result is stored as a file; a preview stays inline."""

from __future__ import annotations

from dataclasses import dataclass

from ..files import FileMeta, FileStore
from .counter import TokenCounter
from .history import VIRTUAL_MARK


@dataclass(frozen=True, slots=True)
class Offloaded:
    meta: FileMeta
    inline: str  # what replaces the original text in the window
    preview_lines: int  # lines 1..preview_lines of the file are shown inline
    tokens: int
    lines: int


def offload(
    text: str, *, store: FileStore, counter: TokenCounter, name: str, label: str, preview_tokens: int, tokens: int
) -> Offloaded:
    """Store ``text`` and build its inline stand-in: header, the first ``preview_tokens`` tokens, a pointer."""
    meta = store.put(text.encode("utf-8"), name=name, mimetype="text/plain", source="virtual")
    lines = text.count("\n") + 1
    head = counter.truncate(text, preview_tokens)
    if "\n" in head and len(head) < len(text):
        head = head[: head.rfind("\n")]  # end on a whole line, so "continue at line N" is exact
    shown = head.count("\n") + 1 if head else 0
    header = (
        f"{VIRTUAL_MARK}{meta.id}: {label}, {tokens:,} tokens, {lines:,} lines, {meta.size_bytes:,} bytes. "
        f"Only the first {shown:,} line(s) are shown.]"
    )
    pointer = (
        f"[... lines {shown + 1:,}-{lines:,} are not shown. Continue with "
        f'file_read(id="{meta.id}", start_line={shown + 1}), or search with file_regex(id="{meta.id}", pattern=...).]'
    )
    return Offloaded(meta, f"{header}\n{head}\n{pointer}", shown, tokens, lines)
