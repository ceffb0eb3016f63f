"""PPTX and XLSX → Markdown-like text from the OOXML parts (lxml, no python-pptx/openpyxl at run time).

PPTX: slides in presentation order, the title as a heading, text as lines or bullets, tables, speaker notes.
XLSX: each sheet as a Markdown table (rows bounded), shared strings resolved.
"""

from __future__ import annotations

import io
import re
from typing import Any
from zipfile import ZipFile

from .markdown import cells_table, list_depth, markdown_table
from .opc import R, relations
from .safety import Budget, iterparse, parse_xml, read_part

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
S = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"


def _relations(archive: Any, part: str, budget: Budget) -> dict[str, str]:
    """rId -> target part path for ``part``'s relationships."""
    return relations(archive, part, budget)[0]


def extract_pptx(archive: ZipFile, budget: Budget) -> str:
    rels = _relations(archive, "ppt/presentation.xml", budget)
    order = [
        rels.get(s.get(f"{R}id", ""), "")
        for _, s in iterparse(io.BytesIO(read_part(archive, "ppt/presentation.xml", budget)), (f"{P}sldId",))
    ]
    out = []
    for number, slide in enumerate((s for s in order if s), 1):
        budget.check_time(f"slide {number}")
        out.append(_slide(archive, slide, number, budget))
    return "\n\n".join(out) + "\n"


def _slide(archive: Any, part: str, number: int, budget: Budget) -> str:
    title, lines = "", []
    root = _root(archive, part, budget)
    for shape in root.iter(f"{P}sp", f"{P}graphicFrame"):
        if shape.tag == f"{P}graphicFrame":
            lines.append(_pptx_table(shape))
            continue
        placeholder = shape.find(f".//{P}ph")
        kind = placeholder.get("type", "") if placeholder is not None else ""
        paragraphs = [(p, "".join(t.text or "" for t in p.iter(f"{A}t")).strip()) for p in shape.iter(f"{A}p")]
        texts = [(p, t) for p, t in paragraphs if t]
        if kind in ("title", "ctrTitle") and texts:
            title = " ".join(t for _, t in texts)
            continue
        for p, text in texts:
            props = p.find(f"{A}pPr")
            level = list_depth(props.get("lvl")) if props is not None else 0
            bullet = kind in ("body", "") and placeholder is not None
            lines.append(("  " * level + "- " + text) if bullet else text)
    notes = _notes(archive, part, budget)
    heading = f"## Slide {number}" + (f": {title}" if title else "")
    body = "\n".join(line for line in lines if line)
    return "\n\n".join(x for x in (heading, body, f"Notes: {notes}" if notes else "") if x)


def _notes(archive: Any, slide: str, budget: Budget) -> str:
    for target in _relations(archive, slide, budget).values():
        if "notesSlide" in target and target in archive.namelist():
            root = _root(archive, target, budget)
            texts = []
            for shape in root.iter(f"{P}sp"):
                placeholder = shape.find(f".//{P}ph")
                if placeholder is not None and placeholder.get("type") == "body":
                    texts += ["".join(t.text or "" for t in p.iter(f"{A}t")).strip() for p in shape.iter(f"{A}p")]
            return " ".join(t for t in texts if t)
    return ""


def _pptx_table(frame: Any) -> str:
    return cells_table(
        [
            ["".join(t.text or "" for t in tc.iter(f"{A}t")) for tc in tr.findall(f"{A}tc")]
            for tr in frame.iter(f"{A}tr")
        ]
    )


def _root(archive: Any, part: str, budget: Budget) -> Any:
    return parse_xml(read_part(archive, part, budget), part)


def extract_xlsx(archive: ZipFile, budget: Budget) -> str:
    shared = _shared_strings(archive, budget)
    rels = _relations(archive, "xl/workbook.xml", budget)
    out = []
    for _, sheet in iterparse(io.BytesIO(read_part(archive, "xl/workbook.xml", budget)), (f"{S}sheet",)):
        target = rels.get(sheet.get(f"{R}id", ""), "")
        if target in archive.namelist():
            out.append(f"## Sheet: {sheet.get('name', '?')}\n\n" + _sheet(archive, target, shared, budget))
    return "\n\n".join(out) + "\n"


def _shared_strings(archive: Any, budget: Budget) -> list[str]:
    if "xl/sharedStrings.xml" not in archive.namelist():
        return []
    source = io.BytesIO(read_part(archive, "xl/sharedStrings.xml", budget))
    return ["".join(t.text or "" for t in si.iter(f"{S}t")) for _, si in iterparse(source, (f"{S}si",))]


MAX_COLUMNS = 16_384  # Excel's last column is XFD; a reference past it is hostile or broken, not data


def _column(ref: str | None, after: int) -> int:
    """A cell's column from its reference ("C7" → 2); a cell without one follows the cell before it, and one that
    is not a reference is past the last column."""
    if not ref:
        return after + 1
    letters = re.match(r"[A-Z]{1,3}(?=\d)", ref)
    if not letters:
        return MAX_COLUMNS
    number = 0
    for char in letters.group(0):
        number = number * 26 + ord(char) - 64
    return number - 1


def _sheet(archive: Any, part: str, shared: list[str], budget: Budget) -> str:
    rows: list[list[str]] = []
    total = 0
    for _, row in iterparse(io.BytesIO(read_part(archive, part, budget)), (f"{S}row",)):
        total += 1
        if len(rows) < budget.limits.max_rows:
            cells: dict[int, str] = {}
            column = -1
            for cell in row.iter(f"{S}c"):
                column = _column(cell.get("r"), column)
                if column < MAX_COLUMNS:
                    cells[column] = _value(cell, shared).replace("|", "\\|")
            if cells:
                rows.append([cells.get(i, "") for i in range(max(cells) + 1)])
        row.clear()  # and the rows before it: a million-row sheet keeps no tree of emptied rows
        while (previous := row.getprevious()) is not None:
            row.getparent().remove(previous)
        if total % 10_000 == 0:
            budget.check_time(part)
    return markdown_table(rows, more=total - len(rows)) if rows else "(empty sheet)"


def _value(cell: Any, shared: list[str]) -> str:
    kind = cell.get("t", "")
    if kind == "inlineStr":
        return "".join(t.text or "" for t in cell.iter(f"{S}t"))
    value = cell.find(f"{S}v")
    text = value.text if value is not None and value.text is not None else ""
    if kind == "s" and text.isdigit() and int(text) < len(shared):
        return shared[int(text)]
    return text
