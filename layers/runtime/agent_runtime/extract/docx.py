"""DOCX → Markdown straight from the OOXML (lxml ``iterparse``, streamed): headings, lists and tables kept.

python-docx builds a whole object model; here each top-level paragraph or table is converted as soon as it is
parsed and then dropped, so memory stays flat and large documents go fast.
"""

from __future__ import annotations

import io
import re
from typing import Any

from .safety import Budget, iterparse, open_zip, read_part

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_HEADING = re.compile(r"^(?:heading|überschrift|titre|título|titolo)\s*(\d)$", re.IGNORECASE)


def extract_docx(data: bytes, budget: Budget) -> str:
    archive = open_zip(data)
    styles = _style_names(archive, budget) if "word/styles.xml" in archive.namelist() else {}
    body = io.BytesIO(read_part(archive, "word/document.xml", budget))
    out: list[str] = []
    for _, element in iterparse(body, (f"{W}p", f"{W}tbl")):
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
    previous = ""
    for part in parts:
        if pieces:
            pieces.append("\n" if _is_item(part) and _is_item(previous) else "\n\n")
        pieces.append(part)
        previous = part
    return "".join(pieces)


def _is_item(line: str) -> bool:
    return line.lstrip().startswith("- ")


def _style_names(archive: Any, budget: Budget) -> dict[str, str]:
    names = {}
    for _, style in iterparse(io.BytesIO(read_part(archive, "word/styles.xml", budget)), (f"{W}style",)):
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


def _paragraph(p: Any, styles: dict[str, str]) -> str:
    text = _text(p).strip()
    if not text:
        return ""
    props = p.find(f"{W}pPr")
    style_id = (
        props.find(f"{W}pStyle").get(f"{W}val", "")
        if props is not None and props.find(f"{W}pStyle") is not None
        else ""
    )
    name = styles.get(style_id, style_id).replace("Heading", "heading ").strip()
    heading = _HEADING.match(name.replace("  ", " ")) or _HEADING.match(style_id.replace("Heading", "heading "))
    if heading:
        return "#" * min(int(heading.group(1)), 6) + " " + text
    if name.lower() == "title" or style_id == "Title":
        return "# " + text
    numbering = props.find(f"{W}numPr") if props is not None else None
    if numbering is not None or "list" in name.lower():
        level = numbering.find(f"{W}ilvl") if numbering is not None else None
        named = re.search(r"(\d)$", name)  # "List Bullet 2" is the second level
        depth = int(level.get(f"{W}val", "0")) if level is not None else int(named.group(1)) - 1 if named else 0
        return "  " * depth + "- " + text
    return text


def _table(tbl: Any) -> str:
    rows = []
    for tr in tbl.iter(f"{W}tr"):
        cells = [" ".join(_text(tc).split()).replace("|", "\\|") for tc in tr.findall(f"{W}tc")]
        if cells:
            rows.append("| " + " | ".join(cells) + " |")
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
