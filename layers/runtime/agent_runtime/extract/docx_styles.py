"""DOCX paragraph styles and the Markdown they give: headings, list items, tables, blank lines between blocks."""

from __future__ import annotations

import contextlib
import functools
import re
from typing import Any

from .exceptions import ExtractionError
from .safety import Budget, parse_xml, read_part
from .simple import markdown_table

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING = re.compile(r"^(?:heading|überschrift|titre|título|titolo)\s*(\d)$", re.IGNORECASE)
_LEVEL = re.compile(r"(\d)$")
MAX_LEVEL = 8  # Word's deepest list level (0-8); a hostile w:ilvl cannot ask for a billion spaces


class StyleNames:
    """Style id → name from styles.xml, read on first need: ids such as ``Heading2`` or ``ListBullet`` say what
    they are, and styles.xml (~350 KB in Word's default template) is most of the work on a short document."""

    def __init__(self, archive: Any, budget: Budget) -> None:
        self.archive, self.budget = archive, budget
        self.names: dict[str, str] | None = None
        self._prefixes: dict[str, tuple[str, str]] = {}

    def prefixes(self, style_id: str) -> tuple[str, str]:
        """:func:`style_prefixes` of a style, worked out once per document."""
        if style_id not in self._prefixes:
            self._prefixes[style_id] = style_prefixes(style_id, self)
        return self._prefixes[style_id]

    def get(self, style_id: str, default: str) -> str:
        if self.names is None:
            self.names = {}
            # A damaged styles.xml costs the heading marks of custom styles, not the document's text.
            with contextlib.suppress(ExtractionError):
                if "word/styles.xml" in self.archive.namelist():
                    self.names = _names_in(read_part(self.archive, "word/styles.xml", self.budget))
        return self.names.get(style_id, default)


@functools.lru_cache(maxsize=16)
def _names_in(raw: bytes) -> dict[str, str]:
    """Style id → name. Cached by content: documents from one template share their styles.xml (read-only use)."""
    names = {}
    for style in parse_xml(raw).iterfind(f"{W}style"):
        name = style.find(f"{W}name")
        if name is not None:
            names[style.get(f"{W}styleId", "")] = name.get(f"{W}val", "")
    return names


def style_prefixes(style_id: str, styles: StyleNames) -> tuple[str, str]:
    """A paragraph style's Markdown: (heading or title prefix, list-item prefix); either may be empty.

    The id decides when it names a heading, the title or a list (Word's built-in ids do); otherwise the style's
    name does (localised or custom ids: ``berschrift1`` is named "heading 1")."""
    if not style_id:
        return "", ""
    return _prefixes_of(style_id) or _prefixes_of(styles.get(style_id, style_id)) or ("", "")


def _prefixes_of(name: str) -> tuple[str, str] | None:
    name = name.replace("Heading", "heading ").replace("  ", " ").strip()
    if heading := _HEADING.match(name):
        return "#" * min(int(heading.group(1)), 6) + " ", ""
    if name.lower() == "title":
        return "# ", ""
    if "list" in name.lower():
        named = _LEVEL.search(name)  # "List Bullet 2" / "ListBullet2" is the second level
        return "", "  " * (int(named.group(1)) - 1 if named else 0) + "- "
    return None


def paragraph_block(text: str, prefixes: tuple[str, str], *, numbered: bool, level: str | None) -> str:
    """A non-empty paragraph as Markdown: heading styles win, then the numbering level, then list styles."""
    heading, listed = prefixes
    if heading:
        return heading + text
    if level is not None:
        depth = min(int(level), MAX_LEVEL) if level.isascii() and level.isdigit() else 0
        return "  " * depth + "- " + text
    if listed or numbered:
        return (listed or "- ") + text
    return text


def table_markdown(cells_by_row: list[list[str]]) -> str:
    """Rows of cell texts as a Markdown table: whitespace folded, pipes escaped, short rows (merged cells) padded."""
    rows = [[" ".join(cell.split()).replace("|", "\\|") for cell in cells] for cells in cells_by_row if cells]
    return markdown_table(rows) if rows else ""


def join_blocks(parts: list[str]) -> str:
    """Blank lines between blocks, but consecutive list items stay one list; ends with a newline."""
    pieces: list[str] = []
    was_item = False
    for part in parts:
        is_item = part[0] in "- " and _is_item(part)  # the first character rules out most blocks
        if pieces:
            pieces.append("\n" if is_item and was_item else "\n\n")
        pieces.append(part)
        was_item = is_item
    pieces.append("\n")
    return "".join(pieces)


def _is_item(line: str) -> bool:
    return line.startswith("- ") or (line.startswith(" ") and line.lstrip(" ").startswith("- "))
