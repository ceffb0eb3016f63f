"""The demo model on a message that is only pasted material (a log kept as a virtual file) and attached tables,
with nothing asked in words of its own: it searches the log for its errors, reads the small text attachments, and
answers with the first error and the tables' numbers. It calls no other tool: nothing in such a message names a
value to give one (README, "A first workflow": a restart of "INFO file-…" had been its first call).
"""

from __future__ import annotations

import csv
import io
import re
from typing import Any

from .reading import FILE_ROW, _file_calls, _question, _unnumbered, _unreadable
from .steps import Reply, ScriptedCall, ScriptedRequest
from .words import own_words, score, terms, told

ERRORS = r"\b(ERROR|FATAL|CRITICAL|Exception|Traceback)\b"
_PASTED = re.compile(r"^\[virtual file (file-[0-9a-f]+): user message")
_HIT = re.compile(r"^(\d+)[:\t]\t?(.*)$", re.MULTILINE)
MAX_HITS = 20
SMALL = 200_000  # bytes: a table read whole


def respond(request: ScriptedRequest) -> Reply | None:
    """The next call or the answer; None: the person asked something in words of their own (``assistant``)."""
    question = _question(request)
    pasted = _PASTED.match(question)
    tables = _tables(request)
    if own_words(question).strip() or not (pasted or tables) or "file_regex" not in request.tool_names:
        return None
    searched = dict(_file_calls(request, "file_regex"))
    if pasted and pasted.group(1) not in searched:
        return Reply(
            calls=(ScriptedCall("file_regex", {"id": pasted.group(1), "pattern": ERRORS, "max_matches": MAX_HITS}),)
        )
    read = dict(_file_calls(request, "file_read"))
    unread = [fid for fid in tables if fid not in read]
    if unread and "file_read" in request.tool_names:
        return Reply(calls=tuple(ScriptedCall("file_read", {"id": fid}) for fid in unread))
    return Reply(text=_answer(searched.get(pasted.group(1)) if pasted else None, tables, read, _unreadable(request)))


def _tables(request: ScriptedRequest) -> dict[str, str]:
    """The small text attachments, by id: their names."""
    return {
        fid: name
        for fid, name, mimetype, size, _ in FILE_ROW.findall(request.system_text())
        if mimetype.startswith("text/") and int(size.replace(",", "")) < SMALL
    }


def _answer(log: str | None, tables: dict[str, str], read: dict[str, str | None], unreadable: dict[str, str]) -> str:
    out = ["Here is what I found:"]
    hits = _HIT.findall(log or "")
    if hits:
        line, text = hits[0]
        out.append(f"• The first error in the pasted log is at line {line}: `{text.strip()[:200]}`")
        many = "at least " if len(hits) >= MAX_HITS else ""
        out.append(f"• {many}{len(hits)} error line(s) in all (ERROR, FATAL, CRITICAL, an exception).")
    elif log is not None:
        out.append("• The pasted log has no error lines.")
    for fid, name in tables.items():
        if fid not in unreadable and read.get(fid):
            out += _numbers(name, _unnumbered(read[fid] or ""))
    names = {fid: tables.get(fid, "a file kept for this run") for fid in unreadable}
    out += [f"• I could not read {names[fid]}: {told(why, names[fid])}" for fid, why in unreadable.items()]
    return "\n".join(out)


def from_log(question: str, notes: dict[str, Any]) -> str:
    """A question about a pasted log (its errors searched, the lines around the first read: ``demo``'s notes),
    answered from the log: its first error, how many say the same, and the line before it that bears most on the
    question (what led to it)."""
    errors = [(int(n), str(text)) for n, text in notes.get("ticket-errors", {}).get("lines", [])]
    if not errors:
        return "I found no error line in the log you pasted (searched for ERROR)."
    (line, first), many = errors[0], "At least " if len(errors) >= MAX_HITS else ""
    same = sum(_gist(text) == _gist(first) for _, text in errors)
    out = ["From the log you pasted:", f"• The first error is at line {line}: `{first.strip()[:240]}`"]
    out.append(f"• {many}{len(errors)} error line(s) from there, {same} of them the same failure as the first.")
    before = [(int(n), str(text)) for n, text in notes.get("ticket-excerpt", {}).get("before", []) if int(n) < line]
    if before:
        asked = terms(question)
        n, text = max(reversed(before), key=lambda row: score(row[1], asked))  # the latest line on a tie
        out.append(f"• Just before it, line {n}: `{text.strip()[:240]}`")
    return "\n".join(out)


def _gist(line: str) -> str:
    """An error line without its timestamp and its key=value details: what failed, not for which request."""
    return " ".join(word for word in line.split()[1:] if "=" not in word)


def _numbers(name: str, text: str) -> list[str]:
    """Each numeric column of a table: where it starts and where it peaks (by the first column's label)."""
    rows = list(csv.reader(io.StringIO(text)))
    if len(rows) < 2 or len(rows[0]) < 2:
        return [f"• {name} is not a table I can read numbers from."]
    header, body = rows[0], [row for row in rows[1:] if len(row) == len(rows[0])]
    out = [f"• {name} ({len(body)} rows):"]
    for column in range(1, len(header)):
        values = [(_number(row[column]), row[0]) for row in body]
        if body and all(value is not None for value, _ in values):
            peak, at = max(values, key=lambda item: item[0] or 0.0)
            out.append(f"  ◦ {header[column]}: {values[0][0]:g} at {values[0][1]}, peak {peak:g} at {at}")
    return out


def _number(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None
