"""Virtual files: a large user message or tool result is stored as a file; a preview stays inline.

The preview ends on a whole line when lines are ordinary, so "continue at line N" is exact. When lines are huge
(minified JSON, a one-line log) cutting at a line would show almost nothing, so the preview ends mid-line and
the pointer continues by byte offset instead. A preview of 0 tokens leaves only the header and the pointer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..events import VirtualFile
from ..files import FileMeta, FileStore
from .counter import TokenCounter
from .history import VIRTUAL_MARK

if TYPE_CHECKING:
    from ..steps import Run
    from .ledger import RunLedger


@dataclass(frozen=True, slots=True)
class Offloaded:
    meta: FileMeta
    inline: str  # what replaces the original text in the window
    preview_lines: int  # lines 1..preview_lines of the file are shown inline, whole
    preview_bytes: int  # when the preview ends mid-line: bytes 0..preview_bytes-1 are shown (else 0)
    tokens: int
    lines: int


def offload(
    text: str, *, store: FileStore, counter: TokenCounter, name: str, label: str, preview_tokens: int, tokens: int
) -> Offloaded:
    """Store ``text`` and build its inline stand-in: header, the first ``preview_tokens`` tokens, a pointer."""
    meta = store.put(text.encode("utf-8"), name=name, mimetype="text/plain", source="virtual")
    lines = text.count("\n") + 1
    head = counter.truncate(text, preview_tokens) if preview_tokens > 0 else ""
    if len(head) < len(text) and "\n" in head and head.rfind("\n") >= len(head) // 2:
        head = head[: head.rfind("\n")]  # end on a whole line, so "continue at line N" is exact
    shown_bytes = len(head.encode("utf-8"))
    on_line = bool(head) and text[len(head) : len(head) + 1] in ("\n", "")  # the preview ends on a whole line
    whole_lines = head.count("\n") + on_line
    header = (
        f"{VIRTUAL_MARK}{meta.id}: {label}, {tokens:,} tokens, {lines:,} lines, {meta.size_bytes:,} bytes. "
        + _shown(head, on_line, whole_lines, shown_bytes)
        + "]"
    )
    pointer = _pointer(meta, text, head, on_line, whole_lines, shown_bytes, lines)
    inline = f"{header}\n{head}\n{pointer}" if head else f"{header}\n{pointer}"
    return Offloaded(meta, inline, whole_lines, 0 if on_line else shown_bytes, tokens, lines)


def _shown(head: str, on_line: bool, whole_lines: int, shown_bytes: int) -> str:
    if not head:
        return "No preview is shown."
    if on_line:
        return f"Only the first {whole_lines:,} line(s) are shown."
    return f"Only the first {shown_bytes:,} bytes are shown (lines are long)."


def _pointer(
    meta: FileMeta, text: str, head: str, on_line: bool, whole_lines: int, shown_bytes: int, lines: int
) -> str:
    search = f'or search with file_regex(id="{meta.id}", pattern=...).]'
    if len(head) == len(text):
        return f'[That is the whole file; search it with file_regex(id="{meta.id}", pattern=...).]'
    if on_line:
        return (
            f"[... lines {whole_lines + 1:,}-{lines:,} are not shown. Continue with "
            f'file_read(id="{meta.id}", start_line={whole_lines + 1}), {search}'
        )
    if not head:
        return f'[Read it with file_read(id="{meta.id}", start_line=1) in parts, {search}'
    return (
        f"[... bytes {shown_bytes:,}-{meta.size_bytes:,} are not shown (line {whole_lines + 1:,} continues). "
        f'Continue with file_read(id="{meta.id}", start_byte={shown_bytes}), {search}'
    )


def kept_aside(
    run: Run,
    ledger: RunLedger,
    counter: TokenCounter,
    text: str,
    label: str,
    stem: str,
    preview_tokens: int,
    tokens: int,
) -> str:
    """``text`` of the run offloaded into a virtual file: its preview marked read in the ledger, the file recorded
    once (with its event); the inline stand-in returned."""
    name = f"{stem}-turn{run.state.turn}-{len(run.state.messages)}.txt"
    store = run.context.files
    result = offload(
        text, store=store, counter=counter, name=name, label=label, preview_tokens=preview_tokens, tokens=tokens
    )
    entry = ledger.file_state(result.meta)
    entry["read_lines"] = [[1, result.preview_lines]] if result.preview_lines else []
    entry["read_bytes"] = [[0, result.preview_bytes - 1]] if result.preview_bytes else []
    if all(f["id"] != result.meta.id for f in run.record.files):
        run.record.event(VirtualFile(file=result.meta.id, tokens=tokens, lines=result.lines, source=stem))
        run.record.files.append(result.meta.to_dict())
    return result.inline
