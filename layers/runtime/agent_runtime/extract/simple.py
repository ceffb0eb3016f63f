"""HTML, CSV and plain text → Markdown-like text."""

from __future__ import annotations

import csv
import io
from typing import Any

from .exceptions import ExtractionError
from .safety import Budget

SKIP = {"script", "style", "noscript", "template", "svg", "head"}


def extract_html(data: bytes, budget: Budget) -> str:
    from lxml import etree, html

    try:
        root = html.document_fromstring(data, parser=html.HTMLParser(remove_comments=True, no_network=True))
    except (etree.ParserError, ValueError) as error:
        raise ExtractionError(f"the HTML cannot be parsed: {error}") from None
    out: list[str] = []
    _walk(root, out, budget)
    return "\n\n".join(block for block in out if block.strip()) + "\n"


def _walk(node: Any, out: list[str], budget: Budget) -> None:
    for child in node:
        tag = child.tag if isinstance(child.tag, str) else ""
        if tag in SKIP:
            continue
        text = " ".join(child.text_content().split()) if tag else ""
        if tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            out.append("#" * int(tag[1]) + " " + text)
        elif tag == "li":
            out.append("- " + text)
        elif tag == "table":
            out.append(_html_table(child))
        elif tag in ("p", "pre", "blockquote", "dt", "dd", "figcaption"):
            out.append(text)
        else:
            _walk(child, out, budget)
    budget.check_time("html")


def _html_table(table: Any) -> str:
    rows = [
        [" ".join(c.text_content().split()).replace("|", "\\|") for c in tr.findall(".//th") + tr.findall(".//td")]
        for tr in table.iter("tr")
    ]
    rows = [r for r in rows if r]
    return markdown_table(rows) if rows else ""


def markdown_table(rows: list[list[str]], *, more: int = 0) -> str:
    width = max(len(r) for r in rows)
    padded = [r + [""] * (width - len(r)) for r in rows]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + " --- |" * width]
    lines += ["| " + " | ".join(r) + " |" for r in padded[1:]]
    if more:
        lines.append(f"[… {more:,} more rows not shown]")
    return "\n".join(lines)


def extract_csv(data: bytes, budget: Budget) -> str:
    text = data.decode("utf-8-sig", errors="replace")
    try:
        dialect = csv.Sniffer().sniff(text[:4096]) if text.strip() else csv.excel
    except csv.Error:
        dialect = csv.excel
    rows: list[list[str]] = []
    total = 0
    for row in csv.reader(io.StringIO(text), dialect):
        total += 1
        if len(rows) < budget.limits.max_rows:
            rows.append([cell.replace("|", "\\|") for cell in row])
    if not rows:
        return ""
    return markdown_table(rows, more=total - len(rows)) + "\n"


def extract_text(data: bytes, budget: Budget) -> str:
    return data[: budget.limits.max_chars].decode("utf-8", errors="replace")
