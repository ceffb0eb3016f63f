"""A table attached to a request (a CSV, a TSV, a text of comma-separated rows), as the demo model reads it: data,
its rows, columns and numbers, never a document to review: an attached metrics.csv had been reviewed as prose
("*Review of metrics.csv*: Close to ready — 0 point(s) to address").
"""

from __future__ import annotations

import csv
import io
from typing import Any

from .incident import _numbers


def is_table(name: str, text: str = "") -> bool:
    """A CSV or TSV by its name, or a text whose rows are all the same number (two or more) of comma-separated
    fields."""
    if name.lower().endswith((".csv", ".tsv")):
        return True
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    return len(rows) >= 2 and len(rows[0]) >= 2 and all(len(row) == len(rows[0]) for row in rows)


def table_note(name: str, rows: list[tuple[int, str]]) -> dict[str, Any]:
    """What a table read whole says: its columns and numbers, as lines to answer with."""
    text = "\n".join(line for _, line in rows)
    header = next(csv.reader(io.StringIO(text)), [])
    return {"name": name, "columns": header, "lines": _numbers(name, text)}


def tables_answer(notes: list[dict[str, Any]]) -> str:
    """The answer when what was sent is tables alone: their numbers (there is no document to review)."""
    out = ["There is no document here to review: what you sent is data. Its numbers:"]
    for note in notes:
        out += note["lines"]
        if note["columns"]:
            out.append(f"  columns: {', '.join(note['columns'][:12])}")
    return "\n".join(out)
