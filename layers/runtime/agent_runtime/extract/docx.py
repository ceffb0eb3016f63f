"""DOCX → Markdown straight from the OOXML with lxml: headings, lists and tables kept.

python-docx builds a whole object model in Python. Here a document part up to 16 MB is parsed whole and walked
once by lxml's ``iterwalk`` (``docx_tree.py``); a larger one is streamed (``iterparse``): each top-level paragraph
or table is converted as soon as it is parsed and then dropped, so memory stays flat. Both give the same text.
"""

from __future__ import annotations

import contextlib
import functools
import io
import re
from typing import Any

from .exceptions import ExtractionError
from .safety import Budget, iterparse, open_zip, parse_xml, read_part

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
# Up to this size document.xml is parsed whole and walked once (~3x faster, memory ~10x the XML);
# above it, streamed element by element with flat memory.
WHOLE_TREE_BYTES = 16 * 1024 * 1024
_HEADING = re.compile(r"^(?:heading|überschrift|titre|título|titolo)\s*(\d)$", re.IGNORECASE)


def extract_docx(data: bytes, budget: Budget) -> str:
    archive = open_zip(data)
    styles = StyleNames(archive, budget)
    raw = read_part(archive, "word/document.xml", budget)
    if len(raw) <= WHOLE_TREE_BYTES:
        from .docx_tree import transform  # the fast path: one C-level walk over the parsed tree

        return transform(raw, styles, _join) + "\n"
    out: list[str] = []
    for _, element in iterparse(io.BytesIO(raw), (f"{W}p", f"{W}tbl")):
        if _inside(element, f"{W}tbl") or _inside(element, f"{W}txbxContent"):
            continue  # converted with its table, or skipped with its text box container
        out.append(_table(element) if element.tag == f"{W}tbl" else _paragraph(element, styles))
        _release(element)
        if len(out) % 500 == 0:
            budget.check_time("docx")
    return _join([part for part in out if part]) + "\n"


def _join(parts: list[str]) -> str:
    """Blank lines between blocks, but consecutive list items stay one list (linear: pieces, one join)."""
    pieces: list[str] = []
    was_item = False
    for part in parts:
        is_item = _is_item(part)
        if pieces:
            pieces.append("\n" if is_item and was_item else "\n\n")
        pieces.append(part)
        was_item = is_item
    return "".join(pieces)


def _is_item(line: str) -> bool:
    return line.lstrip().startswith("- ")


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


def _inside(element: Any, tag: str) -> bool:
    parent = element.getparent()
    while parent is not None:
        if parent.tag == tag:
            return True
        parent = parent.getparent()
    return False


def _text(element: Any) -> str:
    if element.find(f".//{W}tab") is None and element.find(f".//{W}br") is None:
        return "".join(element.itertext(f"{W}t"))  # the common case, in C
    parts = []
    for node in element.iter(f"{W}t", f"{W}tab", f"{W}br", f"{W}cr"):
        parts.append(node.text or "" if node.tag == f"{W}t" else ("\t" if node.tag == f"{W}tab" else "\n"))
    return "".join(parts)


def _paragraph(p: Any, styles: StyleNames) -> str:
    text = _text(p).strip()
    if not text:
        return ""
    props = p.find(f"{W}pPr")
    style = props.find(f"{W}pStyle") if props is not None else None
    numbering = props.find(f"{W}numPr") if props is not None else None
    level = numbering.find(f"{W}ilvl") if numbering is not None else None
    prefixes = styles.prefixes(style.get(f"{W}val", "") if style is not None else "")
    return paragraph_block(
        text, prefixes, numbered=numbering is not None, level=level.get(f"{W}val", "0") if level is not None else None
    )


def paragraph_block(text: str, prefixes: tuple[str, str], *, numbered: bool, level: str | None) -> str:
    """A non-empty paragraph as Markdown: heading styles win, then the numbering level, then list styles."""
    heading, listed = prefixes
    if heading:
        return heading + text
    if level is not None:
        return "  " * int(level) + "- " + text
    if listed or numbered:
        return (listed or "- ") + text
    return text


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
        named = re.search(r"(\d)$", name)  # "List Bullet 2" / "ListBullet2" is the second level
        return "", "  " * (int(named.group(1)) - 1 if named else 0) + "- "
    return None


def _table(tbl: Any) -> str:
    return table_markdown([[_text(tc) for tc in tr.findall(f"{W}tc")] for tr in tbl.findall(f"{W}tr")])


def table_markdown(cells_by_row: list[list[str]]) -> str:
    rows = []
    for cells in cells_by_row:
        if cells:
            rows.append("| " + " | ".join(" ".join(c.split()).replace("|", "\\|") for c in cells) + " |")
    if not rows:
        return ""
    width = rows[0].count(" | ") + 1
    return "\n".join([rows[0], "|" + " --- |" * width, *rows[1:]])


def _release(element: Any) -> None:
    # Drop what has been converted: siblings before it and its own children (the iterparse memory idiom).
    element.clear()
    parent = element.getparent()
    while parent is not None and element.getprevious() is not None:
        del parent[0]
