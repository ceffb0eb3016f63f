"""CSV and plain text → Markdown-like text."""

from __future__ import annotations

import csv
import io

from .markdown import markdown_table
from .safety import Budget


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
