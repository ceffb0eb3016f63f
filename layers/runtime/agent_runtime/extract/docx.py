"""DOCX → Markdown straight from the OOXML with lxml: headings, lists and tables kept.

python-docx builds a whole object model in Python. Here word/document.xml is decompressed and parsed 64 KB at a
time; after each piece, the body's completed top-level blocks are converted in one pass of lxml's ``iter`` and
dropped. Memory stays flat whatever the document's length (a block is held whole until it ends), and the part of
the tree walked is still in the cache.

``iter`` yields in document order, filtered in C, only the elements that matter: paragraphs, tables, rows, cells,
text, tabs, breaks, a paragraph's own style and numbering, content to skip. It has no end events and needs none:
a top-level paragraph or table lasts until the next top-level block starts, so only paragraphs, tables, rows and
cells look at their parents, and text, most of the elements, is appended where it falls.

What flows where: text boxes and nested tables flow into their paragraph or cell; paragraphs inside a cell or a
text box are joined by a space; a hyperlink to a web or mail address becomes a Markdown link, a footnote or
endnote reference a Markdown footnote (its text after the body), a picture ``[image: its alt text]``. Skipped: the
fallback copy of alternate content (Word writes every text box twice, as DrawingML and as VML), text moved away
by a tracked change (it reappears at its w:moveTo), deleted text and field codes (not w:t), tracked property
changes (w:pPrChange).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import islice
from typing import Any
from zipfile import ZipFile

from .docx_notes import ENDNOTE, FOOTNOTE
from .docx_styles import Paragraphs
from .exceptions import ExtractionError
from .markdown import cells_table, join_blocks, markdown_link
from .opc import R, W
from .safety import Budget, FeedParser, read_chunks, xml_errors

CHUNK = 1 << 16  # bytes of XML parsed between walks: the tree walked stays small enough to be in the cache
BODY, P, TBL, TR, TC, T = f"{W}body", f"{W}p", f"{W}tbl", f"{W}tr", f"{W}tc", f"{W}t"
PSTYLE, NUMPR, NUMID, ILVL, PPR = f"{W}pStyle", f"{W}numPr", f"{W}numId", f"{W}ilvl", f"{W}pPr"
# Elements that stand for one character (a non-breaking hyphen inside "PROJ-42" must not vanish)
CHARACTERS = {f"{W}tab": "\t", f"{W}br": "\n", f"{W}cr": "\n", f"{W}noBreakHyphen": "-"}
NOTES = (FOOTNOTE, ENDNOTE)
DOCPR = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr"  # a drawing's name, alt text
PICTURE = "{http://schemas.openxmlformats.org/drawingml/2006/picture}pic"
HYPERLINK, RID = f"{W}hyperlink", f"{R}id"
# Skipped with all they hold: alternate content's fallback, text moved away, a paragraph's tab stops (w:tab too)
SKIPPED = ("{http://schemas.openxmlformats.org/markup-compatibility/2006}Fallback", f"{W}moveFrom", f"{W}tabs")
PROPERTIES = (PSTYLE, NUMPR, NUMID, ILVL)
RARE = frozenset((*NOTES, DOCPR, HYPERLINK, *SKIPPED))
# What the walk asks lxml for, in any namespace: lxml tells namespaces apart by comparing their URIs byte by byte
# for every element (~3 % of an extraction), and the walk compares whole tags anyway (a DrawingML a:p is not a P).
TAGS = tuple(
    "{*}" + tag.partition("}")[2]
    for tag in (P, TBL, TR, TC, T, *CHARACTERS, HYPERLINK, *NOTES, DOCPR, *SKIPPED, *PROPERTIES)
)
# Where a paragraph or table stops being top-level: inside a paragraph (text box), table, row or cell.
CONTAINERS = frozenset((P, TBL, TR, TC))


def extract_docx(archive: ZipFile, budget: Budget) -> str:
    paragraphs = Paragraphs(archive, budget)
    blocks = _walk(_batches(read_chunks(archive, "word/document.xml", budget, CHUNK), budget), paragraphs)
    if notes := paragraphs.notes.block():
        blocks.append(notes)
    return join_blocks(blocks)


def _batches(pieces: Iterable[bytes], budget: Budget) -> Iterator[tuple[Any, Any]]:
    """The body after each piece is parsed, with its last child (perhaps still incomplete; None once the whole
    part is parsed). When the walk of a batch is done, the children before that last one are dropped."""
    parser = FeedParser()
    body = None
    held = 0  # bytes parsed since the last walk: at most about the size of the block still open
    with xml_errors():
        for piece in pieces:
            parser.feed(piece)
            held += len(piece)
            if body is None and (root := parser.root()) is not None:
                body = root.find(BODY)
            if body is not None and len(body) > 1:
                yield body, body[-1]
                del body[:-1]
                held = 0
                budget.check_time("docx")
            elif held > budget.limits.max_block_bytes:
                raise ExtractionError(
                    f"one paragraph or table of the document is more than {budget.limits.max_block_bytes >> 20} MB "
                    "of XML: refused rather than held in memory whole"
                )
        root = parser.close()
    if body is None and root is not None:
        body = root.find(BODY)
    if body is not None:
        yield body, None


# One loop over locals: it runs once per element yielded (~60 per page), where attribute lookups and calls are most
# of the cost. A block is turned into its string when the next one starts, so what stays alive is strings, not lists
# the garbage collector would keep walking.
def _walk(batches: Iterable[tuple[Any, Any]], paragraphs: Paragraphs) -> list[str]:  # noqa: C901 (one hot loop)
    """The top-level blocks as Markdown, empty ones dropped."""
    blocks: list[str] = []
    text: list[str] = []  # where text goes now: the open paragraph's pieces, or the open cell's
    record: list[Any] | None = None  # the open top-level paragraph's [pieces, style, numId, level]
    paragraph = table = row = cell = None  # the open paragraph's element; the open table's, its latest row and cell
    rows: list[list[list[str]]] = []
    for body, last in batches:
        elements = body.iter(TAGS)
        for element in elements:
            tag = element.tag
            if tag == T:
                if value := element.text:
                    text.append(value)
            elif tag == P:
                parent = element.getparent()
                if parent is cell:
                    if text:  # a cell's next paragraph
                        text.append(" ")
                elif parent is body or (top := _top(parent, body)) is not None:
                    if (element if parent is body else top) is last:
                        break  # not complete yet: it is walked with the next batch
                    _close(blocks, record, rows, paragraphs)
                    text, paragraph, table, cell = [], element, None, None
                    record, rows = [text, "", None, None], []
                elif text:  # a paragraph in a text box, or in a nested table's cell
                    text.append(" ")
            elif tag == TC:
                if table is not None and rows and (element.getparent() is row or _table_of(element) is table):
                    text, cell = [], element
                    rows[-1].append(text)
            elif tag in CHARACTERS:
                text.append(CHARACTERS[tag])
            elif tag == TR:
                if table is not None and (element.getparent() is table or _table_of(element) is table):
                    rows.append([])
                    row = element
            elif tag == TBL:
                parent = element.getparent()
                if parent is body or (top := _top(parent, body)) is not None:
                    if (element if parent is body else top) is last:
                        break
                    _close(blocks, record, rows, paragraphs)
                    text, paragraph, table, rows, cell = [], None, element, [], None
                    record = None
            elif tag in RARE:  # a few per page at most: a call costs nothing here
                _rare(tag, element, elements, text, paragraphs)
            elif tag in PROPERTIES and record is not None:
                _take(element, tag, paragraph, record)
    _close(blocks, record, rows, paragraphs)
    return blocks


def _rare(tag: str, element: Any, elements: Iterator[Any], text: list[str], paragraphs: Paragraphs) -> None:
    """Notes' marks, images' names, links as Markdown, and the subtrees never read (skipped in ``elements``)."""
    if tag in NOTES:
        text.append(paragraphs.notes.mark(tag, element.get(f"{W}id")))
    elif tag == DOCPR:
        if (image := _image(element)) is not None:
            text.append(image)
    elif tag == HYPERLINK:
        if url := paragraphs.link(element.get(RID), element.get(f"{W}anchor")):
            if link := markdown_link("".join(t.text or "" for t in element.iter(T)), url):
                text.append(link)
            _skip(element, elements)  # its text is in the label
    else:
        _skip(element, elements)  # SKIPPED: its descendants come right after it in document order


def _skip(element: Any, elements: Iterator[Any]) -> None:
    skip = sum(1 for _ in element.iterdescendants(TAGS))
    next(islice(elements, skip, skip), None)  # consumes them


def _top(node: Any, body: Any) -> Any:
    """The body's child holding a block whose parent is ``node`` (content controls may wrap blocks), or None if
    the block is nested in a paragraph or table."""
    child = None
    while node is not None and node is not body:
        if node.tag in CONTAINERS:
            return None
        child, node = node, node.getparent()
    return child if node is body else None


def _table_of(element: Any) -> Any:
    """The table a row or cell belongs to: the nearest w:tbl above it (content controls may wrap rows)."""
    node = element.getparent()
    while node is not None and node.tag != TBL:
        node = node.getparent()
    return node


def _image(properties: Any) -> str | None:
    """``[image: alt text]`` (or ``[image]``) where a picture is drawn; None for other drawings (text boxes,
    shapes, charts)."""
    holder = properties.getparent()
    if holder is None or holder.find(f".//{PICTURE}") is None:
        return None
    alt = " ".join((properties.get("descr") or properties.get("title") or "").split())
    return f"[image: {alt}]" if alt else "[image]"


def _take(element: Any, tag: str, paragraph: Any, record: list[Any]) -> None:
    """A style or numbering property into the paragraph's record, if it is the paragraph's own (not one inside
    w:pPrChange or a text box)."""
    owner = element.getparent()
    if tag in (NUMID, ILVL):
        owner = owner.getparent() if owner is not None and owner.tag == NUMPR else None
    if owner is None or owner.tag != PPR or owner.getparent() is not paragraph:
        return
    if tag == PSTYLE:
        record[1] = element.get(f"{W}val", "")
    elif tag == NUMPR:
        record[2] = record[2] or ""
    elif tag == NUMID:
        record[2] = element.get(f"{W}val", "")
    else:
        record[3] = element.get(f"{W}val", "0")


def _close(blocks: list[str], record: list[Any] | None, rows: list[list[list[str]]], paragraphs: Paragraphs) -> None:
    """The block that has ended, a paragraph (its record) or else a table (its rows), as Markdown into blocks."""
    if record is not None:
        pieces, style, num_id, level = record
        block = "".join(pieces).strip()
        if block and (style or num_id is not None or level is not None):
            block = paragraphs.block(block, style, num_id, level)
    else:
        block = cells_table([["".join(cell) for cell in row] for row in rows]) if rows else ""
    if block:
        blocks.append(block)
