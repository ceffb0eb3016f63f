"""The status message appended at the tail of every request (never stored in the history)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..files import FileMeta, FileStore
from ..messages import quoted
from .coverage import describe
from .history import STATUS_MARK

if TYPE_CHECKING:
    from .ledger import RunLedger

ARCHIVES_LISTED = 3
VIRTUAL_LISTED = 5  # partly read virtual files: every row is paid in full on every request (the status is new)
COMPACT_BELOW = 3_000  # input budgets under this get the short status (in 2k it would take a quarter of them)


@dataclass(frozen=True, slots=True)
class WindowNumbers:
    turn: int
    used: int
    usable: int  # input budget: window (or context_budget) minus the output reserve
    output_reserve: int
    compaction_at: int
    compactions: int
    split: Mapping[str, int]
    tool_calls_used: int = 0
    tool_calls_limit: int | None = None
    scale: float = 1.0  # server tokens per tiktoken token, learned from usage
    max_files: int = 1_000  # rows of the files list (a small window cannot afford one per file)


def file_rows(
    files: FileStore, ledger: RunLedger, extracted: Mapping[str, str]
) -> list[tuple[FileMeta, dict[str, Any]]]:
    """Each file of the run with what the ledger knows of it (and where its text was extracted to)."""
    rows: list[tuple[FileMeta, dict[str, Any]]] = []
    for meta in files.list():
        state: dict[str, Any] = dict(ledger.file_state(meta))
        rows.append((meta, state | {"extracted_to": extracted[meta.id]} if meta.id in extracted else state))
    return rows


def render_status(numbers: WindowNumbers, files: Sequence[tuple[FileMeta, Mapping[str, Any]]]) -> str:
    n = numbers
    if n.usable < COMPACT_BELOW:
        return _compact(n, files)
    left = max(0, n.usable - n.used)
    split = " · ".join(f"{name} {value:,}" for name, value in n.split.items() if value)  # parts at 0 left out
    lines = [
        f"{STATUS_MARK} · turn {n.turn}]",
        f"tokens: {n.used:,} used of {n.usable:,} available for input ({n.used / n.usable:.1%}), {left:,} left; "
        f"{n.output_reserve:,} more reserved for the answer",
        f"split: {split}",
        f"compaction at {n.compaction_at:,} tokens ({max(0, n.compaction_at - n.used):,} to go); "
        f"{n.compactions} so far",
    ]
    if n.scale > 1.0:
        lines.append(f"(counts calibrated to the server's tokenizer: x{n.scale:.2f})")
    if n.tool_calls_limit is not None:
        left = max(0, n.tool_calls_limit - n.tool_calls_used)
        lines.append(f"tool calls: {n.tool_calls_used} used of {n.tool_calls_limit}, {left} left")
    lines += _files_lines(files, n.max_files)
    return "\n".join(lines)


def _files_lines(files: Sequence[tuple[FileMeta, Mapping[str, Any]]], limit: int) -> list[str]:
    if not files:
        return []
    listed = _worth_listing(files, limit)
    if not listed:  # every file read, partly read long ago or archived: one line, not a header and a row
        return [f"files: {len(files)}, each named by the message that points at it"]
    rows = [_file_line(meta, state) for meta, state in listed]
    more = len(files) - len(listed)
    more_row = [f"- … {more} more: ids in the messages that point at them"] if more else []
    return [f"files ({len(files)}):", *rows, *more_row]


def _worth_listing(
    files: Sequence[tuple[FileMeta, Mapping[str, Any]]], limit: int
) -> list[tuple[FileMeta, Mapping[str, Any]]]:
    """The status must not grow with the run: attachments and extracted files first; virtual files until they
    are fully read, the newest few; only the newest archives not read whole (compaction archives); at most
    ``limit`` rows in all (the rest are named in the messages that point at them)."""
    archives = [(meta, state) for meta, state in files if meta.source == "archive" and not _fully_read(state)]
    archives = archives[-ARCHIVES_LISTED:]  # masked outputs are read whole: their pointers name them
    first = [(meta, state) for meta, state in files if meta.source in ("attachment", "extracted")]
    virtual = [(meta, state) for meta, state in files if meta.source == "virtual" and not _fully_read(state)]
    virtual = virtual[-VIRTUAL_LISTED:]
    ranked = {meta.id for meta, _ in [*first, *reversed(virtual), *reversed(archives)][: max(limit, 1)]}
    return [row for row in files if row[0].id in ranked]


def _fully_read(state: Mapping[str, Any]) -> bool:
    total = state.get("lines") or 0
    return bool(total) and state.get("read_lines") == [[1, total]]


def _coverage(meta: FileMeta, state: Mapping[str, Any]) -> str:
    """Line and byte ranges together: a byte read of a one-line file is not hidden by a line read."""
    parts = []
    if state.get("read_lines"):
        parts.append(describe(state["read_lines"], state.get("lines") or 0, "lines"))
    if state.get("read_bytes"):
        parts.append(describe(state["read_bytes"], meta.size_bytes, "bytes"))
    return "read " + "; ".join(parts) if parts else "not read yet"


def _file_line(meta: FileMeta, state: Mapping[str, Any]) -> str:
    size = f"{meta.size_bytes:,} bytes"
    if state.get("tokens") is not None:
        size = f"{state['tokens']:,} tokens, {state['lines']:,} lines"
    read = _coverage(meta, state)
    loaded = "preloaded" if state.get("preloaded") else "not preloaded"
    kind = "" if state.get("tokens") is not None else "; binary: extract it to text first"
    if state.get("extracted_to"):
        kind = f"; extracted to {state['extracted_to']}: read that file"
    name, mimetype = quoted(meta.name), quoted(meta.mimetype, 80)
    return f"- {meta.id} {name} ({meta.source}, {mimetype}, {size}) {read}; {loaded}{kind}"


def _compact(n: WindowNumbers, files: Sequence[tuple[FileMeta, Mapping[str, Any]]]) -> str:
    """The same facts in two lines and a short row per file, for windows of a few thousand tokens."""
    calls = f"; tool calls {n.tool_calls_used}/{n.tool_calls_limit}" if n.tool_calls_limit is not None else ""
    scale = f"; counts x{n.scale:.2f}" if n.scale > 1.0 else ""
    lines = [
        f"{STATUS_MARK} · turn {n.turn}] tokens {n.used:,}/{n.usable:,} ({n.used / n.usable:.0%}), "
        f"{max(0, n.usable - n.used):,} left; compaction at {n.compaction_at:,} ({n.compactions} so far){scale}{calls}"
    ]
    listed = _worth_listing(files, n.max_files)
    for meta, state in listed:
        size = f"{state['lines']:,} lines" if state.get("tokens") is not None else f"{meta.size_bytes:,} bytes"
        lines.append(f"- {meta.id} {quoted(meta.name, 60)} ({size}) {_coverage(meta, state)}")
    if len(listed) < len(files):
        lines.append(f"- … {len(files) - len(listed)} more: ids in the messages that point at them")
    return "\n".join(lines)
