"""DOCX body → blocks from the parsed tree in one ``iterwalk`` pass: the fast path for parts up to 16 MB.

lxml walks the tree in C and calls back only for the few element types that matter (paragraphs, tables, rows,
cells, text, tabs, breaks, a paragraph's own style and numbering). It produces exactly what the streamed path in
``docx.py`` produces: text boxes and nested tables flow into their paragraph or cell, tracked-change properties
(``w:pPrChange``) and field codes are ignored.
"""

from __future__ import annotations

from typing import Any

from .docx import W, paragraph_block, style_prefixes, table_markdown
from .safety import parse_xml

P, TBL, TR, TC = f"{W}p", f"{W}tbl", f"{W}tr", f"{W}tc"
T, TAB, BR, CR = f"{W}t", f"{W}tab", f"{W}br", f"{W}cr"
PSTYLE, NUMPR, ILVL, PPR = f"{W}pStyle", f"{W}numPr", f"{W}ilvl", f"{W}pPr"
TAGS = (P, TBL, TR, TC, T, TAB, BR, CR, PSTYLE, NUMPR, ILVL)
BREAKS = {TAB: "\t", BR: "\n", CR: "\n"}


class _Walk:
    """State of one pass: the paragraph or cell collecting text, and how deep in paragraphs and tables we are."""

    def __init__(self, styles: dict[str, str]) -> None:
        self.styles, self.prefixes = styles, {}  # style id -> (heading prefix, list prefix)
        self.blocks: list[str] = []
        self.text: list[str] = []
        self.in_p = self.in_tbl = 0
        self.paragraph: Any = None
        self.style: str | None = None
        self.numbered, self.level = False, None
        self.rows: list[list[str]] = []

    def paragraph_property(self, element: Any, tag: str) -> None:
        owner = element.getparent()  # a paragraph's own w:pPr, not one inside w:pPrChange or a text box
        if tag == ILVL:
            owner = owner.getparent() if owner is not None and owner.tag == NUMPR else None
        if owner is None or owner.tag != PPR or owner.getparent() is not self.paragraph:
            return
        if tag == PSTYLE:
            self.style = element.get(f"{W}val", "")
        elif tag == NUMPR:
            self.numbered = True
        else:
            self.level = element.get(f"{W}val", "0")

    def end_paragraph(self) -> None:
        text = "".join(self.text).strip()
        if not text:
            return
        style = self.style or ""
        if style not in self.prefixes:
            self.prefixes[style] = style_prefixes(style, self.styles)
        self.blocks.append(paragraph_block(text, self.prefixes[style], numbered=self.numbered, level=self.level))


def transform(raw: bytes, styles: dict[str, str]) -> list[str]:
    """The document's blocks (paragraphs and tables as Markdown), empty ones dropped."""
    from lxml import etree

    body = parse_xml(raw).find(f"{W}body")
    if body is None:
        return []
    walk = _Walk(styles)
    for event, element in etree.iterwalk(body, events=("start", "end"), tag=TAGS):
        tag = element.tag
        if tag == T:
            if event == "start" and element.text:
                walk.text.append(element.text)
        elif tag in BREAKS:
            if event == "start":
                walk.text.append(BREAKS[tag])
        elif walk.in_tbl == 0 and tag == P:
            _paragraph(walk, event, element)
        elif tag in (PSTYLE, NUMPR, ILVL):
            if event == "start" and walk.in_p == 1 and walk.in_tbl == 0:
                walk.paragraph_property(element, tag)
        else:
            _table(walk, event, tag)
    return [block for block in walk.blocks if block]


def _paragraph(walk: _Walk, event: str, element: Any) -> None:
    if event == "start":
        walk.in_p += 1
        if walk.in_p == 1:  # a top-level paragraph; nested ones (text boxes) flow into it
            walk.text, walk.paragraph, walk.style, walk.numbered, walk.level = [], element, None, False, None
        return
    walk.in_p -= 1
    if walk.in_p == 0:
        walk.end_paragraph()


def _table(walk: _Walk, event: str, tag: str) -> None:
    if tag == TBL:
        if event == "start":
            walk.in_tbl += 1
            if walk.in_tbl == 1 and walk.in_p == 0:
                walk.rows = []
        else:
            walk.in_tbl -= 1
            if walk.in_tbl == 0 and walk.in_p == 0:
                walk.blocks.append(table_markdown(walk.rows))
    elif walk.in_tbl == 1 and walk.in_p == 0:  # the outer table's own rows and cells; nested ones flow in
        if tag == TR and event == "start":
            walk.rows.append([])
        elif tag == TC and event == "start":
            walk.text = []
        elif tag == TC:
            walk.rows[-1].append("".join(walk.text))
