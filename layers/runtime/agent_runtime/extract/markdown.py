"""Markdown building blocks shared by the extractors: tables, links, and blank lines between blocks."""

from __future__ import annotations

import re

MAX_DEPTH = 8  # the deepest list level in Word and PowerPoint (0-8); a hostile level cannot ask for a billion spaces
# What an extracted link may point at: the web and mail, not javascript:, file: or a document's own anchors
LINK_PREFIXES = ("http://", "https://", "mailto:", "ftp://")
_ITEM = re.compile(r" *(?:- |\d+\. )")
_ITEM_START = frozenset("- 0123456789")


def markdown_table(rows: list[list[str]], *, more: int = 0) -> str:
    """Rows as a Markdown table, the first as its header; short rows padded; ``more`` rows said to be left out."""
    width = max(len(r) for r in rows)
    padded = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in padded[1:]]
    if more:
        lines.append(f"[… {more:,} more rows not shown]")
    return "\n".join(lines)


def cells_table(cells_by_row: list[list[str]], *, max_rows: int | None = None) -> str:
    """Rows of cell texts as a Markdown table: whitespace folded, pipes escaped, short rows (merged cells) padded."""
    rows = [[" ".join(cell.split()).replace("|", "\\|") for cell in cells] for cells in cells_by_row if cells]
    shown = rows[:max_rows] if max_rows is not None else rows
    return markdown_table(shown, more=len(rows) - len(shown)) if rows else ""


def web_address(address: str) -> bool:
    return address.lower().startswith(LINK_PREFIXES)


def markdown_link(label: str, address: str) -> str:
    """``[label](address)``: the label on one line with its brackets escaped, the address with its spaces and
    parentheses escaped; empty for an empty label."""
    label = " ".join(label.split()).replace("[", "\\[").replace("]", "\\]")
    address = address.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
    return f"[{label}]({address})" if label else ""


def join_blocks(parts: list[str]) -> str:
    """Blank lines between blocks, but consecutive list items stay one list; ends with a newline."""
    pieces: list[str] = []
    was_item = False
    for part in parts:
        is_item = part[0] in _ITEM_START and _is_item(part)  # the first character rules out most blocks
        if pieces:
            pieces.append("\n" if is_item and was_item else "\n\n")
        pieces.append(part)
        was_item = is_item
    pieces.append("\n")
    return "".join(pieces)


def _is_item(line: str) -> bool:
    return _ITEM.match(line) is not None


def list_depth(level: str | None) -> int:
    """A list level attribute (w:ilvl, a:pPr/@lvl) as a depth, bounded; anything but a small number is level 0."""
    return min(int(level), MAX_DEPTH) if level and level.isascii() and level.isdigit() else 0
