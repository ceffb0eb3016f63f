"""DOCX body → Markdown from the parsed tree in one ``iterwalk`` pass: the fast path for parts up to 16 MB.

lxml walks the tree in C and calls back only for the few element types that matter (paragraphs, tables, rows,
cells, text, tabs, breaks, a paragraph's own style and numbering). It produces exactly what the streamed path in
``docx.py`` produces: text boxes and nested tables flow into their paragraph or cell, tracked-change properties
(``w:pPrChange``) and field codes are ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .docx import StyleNames, W, paragraph_block, table_markdown
from .safety import parse_xml

P, TBL, TR, TC = f"{W}p", f"{W}tbl", f"{W}tr", f"{W}tc"
T, TAB, BR, CR = f"{W}t", f"{W}tab", f"{W}br", f"{W}cr"
PSTYLE, NUMPR, ILVL, PPR = f"{W}pStyle", f"{W}numPr", f"{W}ilvl", f"{W}pPr"
TAGS = (P, TBL, TR, TC, T, TAB, BR, CR, PSTYLE, NUMPR, ILVL)
PROPERTIES = (PSTYLE, NUMPR, ILVL)
BREAKS = {TAB: "\t", BR: "\n", CR: "\n"}


class _Paragraph:
    """The top-level paragraph being read: its element (to tell its own properties from nested ones), style and
    numbering."""

    def __init__(self, element: Any) -> None:
        self.element, self.style, self.numbered, self.level = element, "", False, None

    def take(self, element: Any, tag: str) -> None:
        owner = element.getparent()  # a paragraph's own w:pPr, not one inside w:pPrChange or a text box
        if tag == ILVL:
            owner = owner.getparent() if owner is not None and owner.tag == NUMPR else None
        if owner is None or owner.tag != PPR or owner.getparent() is not self.element:
            return
        if tag == PSTYLE:
            self.style = element.get(f"{W}val", "")
        elif tag == NUMPR:
            self.numbered = True
        else:
            self.level = element.get(f"{W}val", "0")


def transform(raw: bytes, styles: StyleNames, join: Callable[[list[str]], str]) -> str:  # noqa: C901 (one hot loop)
    """The document's blocks (paragraphs and tables as Markdown, empty ones dropped), joined by ``join``.

    Joined here, while the tree is alive: freeing a large tree leaves the allocator a consolidation to do at the
    next large allocation, which then falls to the caller as it would after any library call."""
    from lxml import etree

    body = parse_xml(raw).find(f"{W}body")
    if body is None:
        return ""
    blocks: list[str] = []
    rows: list[list[str]] = []
    text: list[str] = []
    paragraph = _Paragraph(None)
    in_p = in_tbl = 0
    # One loop with local state: this runs once per element event (~100k for 1,000 pages), where attribute
    # lookups and calls are most of the cost.
    for event, element in etree.iterwalk(body, events=("start", "end"), tag=TAGS):
        tag = element.tag
        if tag == T:
            if event == "start" and (value := element.text):
                text.append(value)
        elif tag in BREAKS:
            if event == "start":
                text.append(BREAKS[tag])
        elif tag == P:
            if event == "start":
                in_p += 1
                if in_p == 1 and in_tbl == 0:  # a top-level paragraph; nested ones (text boxes) flow into it
                    text, paragraph = [], _Paragraph(element)
                continue
            in_p -= 1
            if in_p == 0 and in_tbl == 0 and (content := "".join(text).strip()):
                prefixes = styles.prefixes(paragraph.style)
                level = paragraph.level
                blocks.append(paragraph_block(content, prefixes, numbered=paragraph.numbered, level=level))
        elif tag in PROPERTIES:
            if event == "start" and in_p == 1 and in_tbl == 0:
                paragraph.take(element, tag)
        elif tag == TBL:
            in_tbl += 1 if event == "start" else -1
            if in_p == 0 and in_tbl == (1 if event == "start" else 0):
                if event == "start":
                    rows = []
                elif table := table_markdown(rows):
                    blocks.append(table)
        elif in_tbl == 1 and in_p == 0:  # the outer table's own rows and cells; nested ones flow in
            if event == "end":
                if tag == TC:
                    rows[-1].append("".join(text))
            elif tag == TR:
                rows.append([])
            else:
                text = []
    return join(blocks)
