"""File tools the model always has. The context engine extends these (byte ranges, regex, budgets)."""

from __future__ import annotations

from ..run_context import RunContext
from ..tools import Tool, tool
from .exceptions import FileRangeError

MAX_LINES_PER_READ = 2000
MAX_CHARS_PER_READ = 60_000


@tool
def file_read(ctx: RunContext, id: str, start_line: int = 1, end_line: int | None = None) -> str:
    """Read a file from this run's files list, as numbered lines.

    Reads at most 2,000 lines or 60,000 characters per call; the answer says where it stopped so the next
    call can continue from there.

    Args:
        id: The file id from the files list (for example ``file-1a2b3c4d5e6f``).
        start_line: First line to return, counting from 1.
        end_line: Last line to return (inclusive). Omit to read to the end of the file.
    """
    meta = ctx.files.meta(id)
    lines = ctx.files.read(id).decode("utf-8", errors="replace").splitlines()
    if start_line < 1 or (end_line is not None and end_line < start_line):
        raise FileRangeError(f"invalid line range {start_line}..{end_line}: lines count from 1")
    if start_line > max(len(lines), 1):
        raise FileRangeError(f"{meta.name} has {len(lines)} lines; start_line {start_line} is past the end")
    stop = len(lines) if end_line is None else min(end_line, len(lines))
    stop = min(stop, start_line + MAX_LINES_PER_READ - 1)
    out: list[str] = []
    size = 0
    for number in range(start_line, stop + 1):
        line = f"{number:>6}\t{lines[number - 1]}"
        if size + len(line) > MAX_CHARS_PER_READ and out:
            stop = number - 1
            break
        out.append(line)
        size += len(line) + 1
    header = f"[{meta.name} ({meta.id}) lines {start_line}-{stop} of {len(lines)}]"
    more = f"\n[continue with start_line={stop + 1}]" if stop < len(lines) else ""
    return header + "\n" + "\n".join(out) + more


FILE_TOOLS: tuple[Tool, ...] = (file_read,)
