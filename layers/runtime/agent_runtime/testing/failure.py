"""The demo model on "what went wrong?" / "why did it fail?": it reads the log the question is about (pasted in the
message, kept as a file, or attached) from its first error, and the attached tables as the numbers beside it. A
table is data (rows, columns, numbers), never a document to review: an attached CSV had taken the question
("*Review of metrics.csv*: Close to ready — 0 point(s)") while the pasted log went unread.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..context.history import MASK_MARK
from ..messages import text_of
from .incident import _gist, _numbers
from .pasted import ERROR_LINE, LOG_LINE, inline_notes
from .reading import FILE_ROW, _calls_made, _file_calls, _question, _question_files, _unnumbered
from .steps import Reply, ScriptedCall, ScriptedRequest
from .tables import is_table
from .words import own_words, score, terms, told

FAILURE = re.compile(
    r"\b(?:what|why)\b[^.?!\n]{0,40}?\b(?:wrong|fail\w*|broke\w*|break\w*|crash\w*|happen\w*|down)\b"
    r"|\broot cause\b",
    re.IGNORECASE,
)
REVIEW = re.compile(r"\b(?:review\w*|feedback|thoughts on|comments? on|look over|critique|proofread)\b", re.IGNORECASE)
_HIT = re.compile(r"^(\d+)[:\t]\t?(.*)$", re.MULTILINE)
_ROW = re.compile(r"^\s*(\d+)\t(.*)$", re.MULTILINE)
NOTE = re.compile(r"^NOTES (failure-\w+) (\{.*\})$", re.MULTILINE)  # kept in its reasoning: results get masked
SEARCHED_FOR = r"\bERROR\b"  # as the pasted logs' reading (pasted.ERROR_LINE) and its answer ("searched for ERROR")
PASTED = "the log you pasted"
MAX_MATCHES = 200  # error lines a search lists: every one counted, up to this


def asked(question: str) -> str:
    """The person's words around a paste (before or after it): the lines that are no log's."""
    return "\n".join(line for line in own_words(question).splitlines() if not LOG_LINE.match(line))


def asks_what_failed(question: str) -> bool:
    return FAILURE.search(asked(question)) is not None


def asks_review(question: str) -> bool:
    return REVIEW.search(asked(question)) is not None


def respond(request: ScriptedRequest, may_call: bool) -> Reply | None:
    """The next read or the answer; None: not a "what went wrong?", or nothing pasted or attached to read."""
    question = _question(request)
    if not asks_what_failed(question) or "file_regex" not in request.tool_names:
        return None
    pasted = sorted(_question_files(request))
    inline = _inline(own_words(question)) if not pasted else None
    attached = _attached(request)
    if not (pasted or inline is not None or attached):
        return None
    tables = {fid: name for fid, name in attached.items() if is_table(name)}
    logs = [(fid, PASTED) for fid in pasted] + [(fid, n) for fid, n in attached.items() if fid not in tables]
    noted, fresh = _noted(request), _fresh(request, set(tables))
    known = {**noted, **fresh}
    calls = [_search(fid) for fid, _ in logs if f"failure-search:{fid}" not in known]
    calls += [ScriptedCall("file_read", {"id": fid}) for fid in tables if f"failure-read:{fid}" not in known]
    found = inline if inline and inline["count"] else _first_log(logs, known)
    if found is not None and (before := _before(request, found)) is not None:
        calls.append(before)
    if calls and may_call:
        notes = "\n".join(
            f"NOTES {key.split(':', 1)[0]} {json.dumps(v)}" for key, v in fresh.items() if key not in noted
        )
        return Reply(text=f"<think>\n{notes}\n</think>" if notes else None, calls=tuple(calls))
    return Reply(text=_answer(question, found, logs, known, tables, inline is not None))


def _attached(request: ScriptedRequest) -> dict[str, str]:
    """The person's text attachments, by id: their names (a binary one has no log to read)."""
    return {
        fid: json.loads(f'"{name}"')
        for fid, name, mimetype, _, source in FILE_ROW.findall(request.system_text())
        if source in ("attachment", "extracted") and mimetype.startswith("text/")
    }


def _search(fid: str) -> ScriptedCall:
    return ScriptedCall("file_regex", {"id": fid, "pattern": SEARCHED_FOR, "max_matches": MAX_MATCHES})


def _inline(message: str) -> dict[str, Any] | None:
    """A log pasted short enough to stay in the message, read there: every error line of it (None: no log)."""
    notes = inline_notes(message)
    if "ticket-errors" not in notes:
        return None
    rows = list(enumerate(message.splitlines(), 1))
    start = len(rows) - len([r for r in rows if LOG_LINE.match(r[1]) or not r[1].strip()])
    errors = [(n, text) for n, text in rows if ERROR_LINE.search(text) and LOG_LINE.match(text)]
    found = _errors("", PASTED, errors, capped=False)
    first = errors[0][0] if errors else start
    erred = dict(errors)
    before = [[n, t] for n, t in rows if first - 3 <= n < first and LOG_LINE.match(t) and n not in erred]
    return found | {"before": before}


def _errors(fid: str, name: str, errors: list[tuple[int, str]], capped: bool) -> dict[str, Any]:
    """What a log's error lines say: the first, how many, how many the same failure as the first."""
    first = errors[0] if errors else None
    same = sum(_gist(text) == _gist(first[1]) for _, text in errors) if first else 0
    return {"id": fid, "name": name, "first": first, "count": len(errors), "capped": capped, "same": same}


def _noted(request: ScriptedRequest) -> dict[str, dict[str, Any]]:
    found = {}
    for message in request.messages:
        if message["role"] == "assistant":
            for kind, value in NOTE.findall(text_of(message)):
                found[f"{kind}:{json.loads(value)['id']}"] = json.loads(value)
    return found


def _fresh(request: ScriptedRequest, tables: set[str]) -> dict[str, dict[str, Any]]:
    """What the results still in view say: a search's errors (or why it failed), a table's numbers, the lines
    before a log's first error."""
    found: dict[str, dict[str, Any]] = {}
    for fid, text in _file_calls(request, "file_regex"):
        if text is not None and not text.startswith(MASK_MARK):
            hits = [(int(n), line) for n, line in _HIT.findall(text)]
            note = _errors(fid, "", hits, "stopped at max_matches" in text.split("\n", 1)[0])
            found[f"failure-search:{fid}"] = note | ({"error": _why(text)} if text.startswith("ERROR") else {})
    for fid, text in _file_calls(request, "file_read"):
        if text is None or text.startswith(MASK_MARK):
            continue
        if fid in tables:
            why = _why(text) if text.startswith("ERROR") else None
            found[f"failure-read:{fid}"] = {"id": fid, "error": why, "text": _unnumbered(text) if not why else ""}
        else:
            rows = [[int(n), line] for n, line in _ROW.findall(text) if not ERROR_LINE.search(line)]
            found[f"failure-before:{fid}"] = {"id": fid, "rows": rows}
    return found


def _why(text: str) -> str:
    return text.removeprefix("ERROR:").strip().splitlines()[0][:240] if text.strip() else "it could not be read"


def _first_log(logs: list[tuple[str, str]], known: dict[str, dict[str, Any]]) -> dict[str, Any] | None:
    """The log the answer reads: the pasted one if it has an error line, else the first attachment that has one."""
    for fid, name in logs:
        note = known.get(f"failure-search:{fid}")
        if note and note["count"]:
            before = known.get(f"failure-before:{fid}", {}).get("rows", [])
            return note | {"name": name, "before": before}
    return None


def _before(request: ScriptedRequest, found: dict[str, Any]) -> ScriptedCall | None:
    """The read of the lines just before a kept log's first error (what led to it), if not made yet."""
    first = found["first"][0]
    if not found["id"] or first <= 1:
        return None
    args = {"id": found["id"], "start_line": max(1, first - 3), "end_line": first - 1}
    made = ("file_read", json.dumps(args, sort_keys=True)) in _calls_made(request)
    return None if made else ScriptedCall("file_read", args)


def _answer(
    question: str,
    found: dict[str, Any] | None,
    logs: list[tuple[str, str]],
    known: dict[str, dict[str, Any]],
    tables: dict[str, str],
    inline: bool,
) -> str:
    out = _from_log(question, found) if found else _no_error(logs, known, inline)
    for fid, name in logs:
        if why := known.get(f"failure-search:{fid}", {}).get("error"):
            out.append(f"• I could not read {name}: {told(why, name)}")
    for fid, name in tables.items():
        read = known.get(f"failure-read:{fid}")
        if read and read["error"]:
            out.append(f"• I could not read {name}: {told(read['error'], name)}")
        elif read:
            out += ["", "The numbers beside it:" if found else "The numbers:", *_numbers(name, read["text"])]
    return "\n".join(out)


def _from_log(question: str, found: dict[str, Any]) -> list[str]:
    """As ``incident.from_log`` says a pasted log's: its first error, how many, and what led to it."""
    (line, first), many = found["first"], "At least " if found["capped"] else ""
    out = [f"From {found['name']}:", f"• The first error is at line {line}: `{first.strip()[:240]}`"]
    out.append(
        f"• {many}{found['count']} error line(s) from there, {found['same']} of them the same failure as the first."
    )
    before = [(int(n), str(text)) for n, text in found["before"] if int(n) < line]
    if before:
        asked_terms = terms(asked(question))
        n, text = max(reversed(before), key=lambda row: score(row[1], asked_terms))  # the latest line on a tie
        out.append(f"• Just before it, line {n}: `{text.strip()[:240]}`")
    return out


def _no_error(logs: list[tuple[str, str]], known: dict[str, dict[str, Any]], inline: bool) -> list[str]:
    where = [PASTED] * inline + [n for fid, n in logs if not known.get(f"failure-search:{fid}", {}).get("error")]
    if not where:
        return ["Nothing pasted or attached here is a log I could read, so I cannot tell what went wrong from one."]
    return [f"I found no error line in {', '.join(dict.fromkeys(where))} (searched for ERROR)."]
