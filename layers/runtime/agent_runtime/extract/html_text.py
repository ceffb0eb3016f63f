"""HTML → Markdown-like text: headings, paragraphs, lists (ordered ones numbered), tables, code blocks, links,
images' alt text.

lxml's HTML parser (tolerant, no network) builds the tree and one ``iterwalk`` turns it into blocks, without
recursion. Text anywhere counts: loose text in a div, a td-less layout or the body is a paragraph like a <p>'s
(e-mail and wiki exports are mostly that). Scripts, styles and other non-content are skipped with what they hold.
"""

from __future__ import annotations

import re
from typing import Any

from .exceptions import ExtractionError
from .markdown import cells_table, join_blocks, markdown_link, web_address
from .safety import Budget

SKIP = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "object", "select", "math"})
HEADINGS = {f"h{n}": "#" * n + " " for n in range(1, 7)}
BLOCKS = frozenset(
    {
        *HEADINGS,
        *("address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog"),
        *("div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "header", "hr", "html", "li"),
        *("main", "nav", "ol", "p", "pre", "section", "summary", "table", "ul"),
    }
)
_SPACE = re.compile(r"\s+")


def extract_html(data: bytes, budget: Budget) -> str:
    from lxml import etree, html

    parser = html.HTMLParser(remove_comments=True, remove_pis=True, no_network=True)
    try:
        root = html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError) as error:
        raise ExtractionError(f"the HTML cannot be parsed: {error}") from None
    if any(entry.type_name == "ERR_RESOURCE_LIMIT" for entry in parser.error_log):
        raise ExtractionError("the HTML is nested too deeply (over 255 levels): refused as hostile")
    return join_blocks(_Blocks(budget).walk(root))


class _Blocks:
    """The walk's state: blocks done, the inline text being gathered, the open lists, links and code blocks."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.blocks: list[str] = []
        self.pieces: list[str] = []  # inline text of the block being gathered
        self.lists: list[list[Any]] = []  # per open list: [ordered, items so far]
        self.items: list[str] = []  # per open list item: its marker, until its first text is out
        self.links: list[tuple[Any, int, str]] = []  # per open link: (element, where its text starts, address)
        self.pre = 0

    def walk(self, root: Any) -> list[str]:
        from lxml import etree

        walker = etree.iterwalk(root, events=("start", "end"))
        for count, (event, element) in enumerate(walker):
            tag = element.tag if isinstance(element.tag, str) else ""
            if event == "start":
                if tag in SKIP or tag == "table":
                    if tag == "table":
                        self.flush()
                        self.blocks.append(_table(element, self.budget.limits.max_rows))
                    walker.skip_subtree()  # its end event still comes, with the tail
                else:
                    self.start(element, tag)
            else:
                self.end(element, tag)
            if count % 4096 == 0:
                self.budget.check_time("html")
        self.flush()
        return [block for block in self.blocks if block]

    def start(self, element: Any, tag: str) -> None:
        if tag in BLOCKS:
            self.flush()
        if tag in ("ul", "ol"):
            start = element.get("start", "1").strip()
            self.lists.append([tag == "ol", int(start) - 1 if start.isascii() and start.isdigit() else 0])
        elif tag == "li":
            ordered, count = self.lists[-1] if self.lists else (False, 0)
            if self.lists:
                self.lists[-1][1] = count + 1
            self.items.append("  " * max(len(self.lists) - 1, 0) + (f"{count + 1}. " if ordered else "- "))
        elif tag == "pre":
            self.pre += 1
        elif tag == "br":
            self.pieces.append("\n")
        elif tag == "img" and (alt := " ".join((element.get("alt") or "").split())):
            self.pieces.append(f" [image: {alt}] ")  # no alt text: decoration or a tracking pixel, left out
        elif tag == "a" and web_address(href := (element.get("href") or "").strip()):
            self.links.append((element, len(self.pieces), href))
        if element.text:
            self.pieces.append(element.text)

    def end(self, element: Any, tag: str) -> None:
        if tag in HEADINGS:
            self.flush(HEADINGS[tag])
        elif tag == "li":
            self.flush()
            if self.items:
                self.items.pop()
        elif tag == "pre":
            self.pre -= 1
            if not self.pre:
                code = "".join(self.pieces).strip("\n")
                self.pieces = []
                self.blocks.append(f"```\n{code}\n```" if code.strip() else "")
        elif tag in ("ul", "ol"):
            self.flush()
            if self.lists:
                self.lists.pop()
        elif self.links and self.links[-1][0] is element:
            _, start, href = self.links.pop()
            link = markdown_link("".join(self.pieces[start:]), href)
            self.pieces[start:] = [link] if link else []
        elif tag in BLOCKS:
            self.flush()
        if element.tail:
            self.pieces.append(element.tail)

    def flush(self, prefix: str = "") -> None:
        """The gathered inline text as a block: whitespace folded as a browser does, line breaks kept; the first
        block of a list item gets its marker."""
        if self.pre or not self.pieces:
            return
        lines = (_SPACE.sub(" ", line).strip() for line in "".join(self.pieces).split("\n"))
        text = "\n".join(line for line in lines if line)
        self.pieces = []
        if not text:
            return
        if self.items and self.items[-1]:
            prefix, self.items[-1] = self.items[-1] + prefix, ""
        self.blocks.append(prefix + text)


def _table(table: Any, max_rows: int) -> str:
    """The table's own rows (not a nested table's) as Markdown; cells' text, nested tables' included, on a line."""
    rows = [
        [cell.text_content() for cell in row if cell.tag in ("td", "th")]
        for row in table.iter("tr")
        if next(row.iterancestors("table"), None) is table
    ]
    return cells_table(rows, max_rows=max_rows)
