"""CSV and plain text → Markdown-like text."""

from __future__ import annotations

import csv
import io

from .exceptions import ExtractionError
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
    # The module's default (128 KB a field) refuses real files (a JSON blob in a cell); the budget's character
    # cap bounds a field anyway. The limit is process-wide: raising it is all this does.
    csv.field_size_limit(max(csv.field_size_limit(), budget.limits.max_chars))
    try:
        for row in csv.reader(io.StringIO(text), dialect):
            total += 1
            if len(rows) < budget.limits.max_rows:
                rows.append([cell.replace("|", "\\|") for cell in row])
    except csv.Error as error:
        raise ExtractionError(f"the CSV is malformed at row {total + 1:,}: {error}") from None
    if not rows:
        return ""
    return markdown_table(rows, more=total - len(rows)) + "\n"


def extract_text(data: bytes, budget: Budget) -> str:
    return data[: budget.limits.max_chars].decode("utf-8", errors="replace")
