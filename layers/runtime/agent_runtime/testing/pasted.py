"""A text pasted into a message, as the demo model reads it: a document (a design doc, meeting notes) reviewed as an
attachment is, or a log read from its errors. A long paste is kept as a virtual file and read with the file tools
(``demo``); a short one stays in the message and is read there, by the message's lines, to the same notes: its
review (or its log's reading) is the same whatever its length.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

LOG_LINE = re.compile(r"^\s*(?:\[?\d{4}-\d\d-\d\d|\[?\d\d:\d\d:\d\d|(?:DEBUG|INFO|WARN(?:ING)?|ERROR)\b)")
OPEN_MARK = re.compile(r"\b(TODO|TBD|FIXME|XXX)\b")
HEADING = re.compile(r"#{1,3} ")
ERROR_LINE = re.compile(r"\bERROR\b")  # what demo's search of a kept log looks for
STOP = {"design", "the", "and", "for", "with", "this", "that", "from", "must", "every", "have", "their"}
INLINE = "doc:message"  # the note of a document pasted into the message itself
MIN_LINES = 3  # lines with words: fewer is a question or a request, not a paste
MAX_ERRORS = 20  # the error lines a search of a kept log returns


def pasted_note(rows: list[tuple[int, str]]) -> dict[str, Any]:
    """A pasted text read whole: a document (reviewed as an attachment is) unless most of its lines are a log's
    (a timestamp or a level first)."""
    said = [text for _, text in rows if text.strip()]
    title = next((text.lstrip("# ").strip() for text in said if re.match(r"#{1,2} ", text)), "")
    name = f"“{title[:80]}” (the document you pasted)" if title else "the document you pasted"
    return doc_note(name, rows) | {"log": sum(map(bool, map(LOG_LINE.match, said))) * 2 > len(said)}


def doc_note(name: str, rows: list[tuple[int, str]]) -> dict[str, Any]:
    """A document's headings, decisions left open (TODO, TBD…) and open questions, each with its line."""
    headings = [[n, t.lstrip("#").strip()] for n, t in rows if t.startswith("## ")]
    open_items = [[n, t.strip()] for n, t in rows if OPEN_MARK.search(t)]
    questions, inside = [], False
    for n, t in rows:
        if t.startswith("#"):
            inside = "question" in t.lower()
        elif inside and t.strip().startswith(("-", "*")) and t.rstrip().endswith("?"):
            questions.append([n, t.strip().lstrip("-* ")])
    words = sorted({w for _, t in rows for w in re.findall(r"[a-z]{5,}", t.lower())} - STOP)
    return {"name": name, "headings": headings, "open": open_items, "questions": questions, "words": words}


def inline_notes(message: str) -> dict[str, Any]:
    """The notes reading a short paste in ``message`` gives, as ``demo``'s reads of a kept one do: a document's
    (``INLINE``), or a log's error lines (``ticket-errors``) and the lines just before the first
    (``ticket-excerpt``). Nothing for a message that holds no paste: a question, a request of a line or two."""
    rows = list(enumerate(message.splitlines(), 1))
    said = [text for _, text in rows if re.search(r"\w", text)]
    if len(said) < MIN_LINES:
        return {}
    log = rows[len(prose(message).splitlines()) :]  # from its first log line: the person's words are no log's
    if sum(bool(LOG_LINE.match(text)) for _, text in log) >= 2 and pasted_note(log)["log"]:
        errors = [(n, text) for n, text in log if ERROR_LINE.search(text)][:MAX_ERRORS]
        first = errors[0][0] if errors else 0
        before = [(n, text) for n, text in log if first - 3 <= n < first and "ERROR" not in text]
        return {"ticket-errors": {"file": "", "lines": errors}, "ticket-excerpt": {"before": before}}
    note = pasted_note(rows)
    if any(HEADING.match(text) for text in said) or note["open"]:
        return {INLINE: note}
    return {}


def prose(message: str) -> str:
    """The person's own words before a pasted log: what a question about it asks."""
    return "\n".join(itertools.takewhile(lambda line: not LOG_LINE.match(line), message.splitlines()))
