"""The demo model's answer to a question, from evidence: the lines of the tools' results and of the thread's earlier
messages that share most terms with the question, its own notes (kept in its reasoning so they outlive masking and
compaction), and what the calls that act on the request did. It cites sources when the prompt asks, and says which
files it could not read and why.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..messages import text_of, tool_names
from .acting import outcome
from .reading import (
    FILE_ROW,
    _asked,
    _calls_made,
    _question,
    _results_since_asked,
    _tool_texts,
    _turns,
    _unnumbered,
    _unreadable,
)
from .steps import ScriptedRequest
from .words import ASKED, told
from .words import score as _score

NOTE = re.compile(r"^NOTES evidence (\{.*\})$", re.MULTILINE)


def _fresh_evidence(request: ScriptedRequest, terms: list[str]) -> list[dict[str, Any]]:
    calls = tool_names(request.messages)
    found = []
    echo = _question(request)[:40].lower()
    for call_id, text in request.tool_results().items():
        said = [line for raw in text.splitlines() for line in _said(raw)]
        lines = [line for line in said if _score(line, terms) > 0 and _content(line) and echo not in line.lower()]
        best = sorted(lines, key=lambda line: -_score(line, terms))[:4]
        if best:
            found.append({"source": calls.get(call_id, "tool"), "lines": [line[:300] for line in best]})
    return found


def _said(raw: str) -> list[str]:
    """What a result line says: without a search's line number and cut marks; a note found in an archive gives
    the lines it kept."""
    line = re.sub(r"^\d+[:\-]\t", "", raw.strip())
    line = re.sub(r"\[… \d+ chars\]", "", line).strip()
    if ASKED in line:
        return []
    if "NOTES " in line:
        return re.findall(r'"((?:[^"\\]|\\.){12,})"', line)
    return [line] if line else []


def _content(line: str) -> bool:
    """A line that says something: not a heading, a search hit's listing or a tool's own header."""
    stripped = line.strip()
    return not (re.match(r"#|id:\s", stripped) or (stripped.startswith("[") and stripped.endswith("]")))


def _noted(request: ScriptedRequest) -> list[dict[str, Any]]:
    """Its own notes, and those a compaction summary carried (in the window or read back from its file)."""
    return [
        json.loads(m)
        for message in request.messages
        if message["role"] != "system"
        for m in NOTE.findall(_unnumbered(text_of(message)))
    ]


def _thread_evidence(request: ScriptedRequest, question: str, terms: list[str]) -> list[dict[str, Any]]:
    """What earlier messages of the thread said (the question itself is no evidence)."""
    lines = [
        line.strip()
        for turn in _turns(request)[:-1]
        for line in turn.splitlines()
        if _score(line, terms) > 0 and _content(line)
    ]
    return [{"source": "this thread", "lines": lines[:4]}] if lines else []


def _compose(request: ScriptedRequest, evidence: list[dict[str, Any]], terms: list[str]) -> str:
    acted = _acted(request)
    unread = [f"I could not read {name}: {told(why, name)}" for name, why in _unreadable_named(request)]
    if acted:  # what the request asked done is the answer (a ticket's key and link, or why it was not made)
        return "\n".join([*acted, *unread])
    ranked = sorted(
        ((_score(line, terms), item["source"], line) for item in evidence for line in item["lines"]),
        key=lambda row: -row[0],
    )
    if not ranked:
        searched = ", ".join(sorted({name for name, _ in _calls_made(request)})) or "nothing"
        return " ".join(
            [f"I could not find an answer to that (searched with: {searched}; terms: {', '.join(terms[:6])}).", *unread]
        )
    top = list(dict.fromkeys((source, line) for _, source, line in ranked))[:4]
    out = ["Here is what I found:"] + [f"• {told(line)} (from {source})" for source, line in top] + unread
    if "cite" in request.system_text().lower():
        titles = _titles(request) or sorted({source for source, _ in top})
        out.append("Sources: " + "; ".join(titles[:3]))
    return "\n".join(out)


def _acted(request: ScriptedRequest) -> list[str]:
    """What the calls that act on the request did; or, when a duplicate stopped them, which one it is."""
    asked = _asked(request, _question(request))
    specs = {t["function"]["name"]: t["function"] for t in request.body.get("tools", [])}
    results = _results_since_asked(request)  # a "go on" after a Stop: the calls made before it too
    lines = [
        outcome(call["function"]["name"], results[call["id"]])
        for message in request.messages
        for call in message.get("tool_calls", [])
        if call["id"] in results and asked.makes(specs.get(call["function"]["name"], {}))
    ]
    duplicate = asked.duplicate(_tool_texts(request))
    if not lines and duplicate and any(asked.makes(spec) for spec in specs.values()):
        return [f"This looks like a duplicate of {duplicate}, so I made nothing new."]
    return lines


def _unreadable_named(request: ScriptedRequest) -> list[tuple[str, str]]:
    return [(_name_of(request, fid), why) for fid, why in _unreadable(request).items()]


def _name_of(request: ScriptedRequest, fid: str) -> str:
    """A file as people know it: an attachment's name; a file the run made (a kept message, an archive) is no
    name of theirs."""
    listed = "\n".join([request.system_text(), *(text_of(m) for m in request.messages if m["role"] == "user")])
    row = next((row for row in FILE_ROW.findall(listed) if row[0] == fid), None)
    return row[1] if row and row[4] in ("attachment", "extracted") else "a file kept for this run"


def _titles(request: ScriptedRequest) -> list[str]:
    found = []
    for text in _tool_texts(request):
        found += re.findall(r"^(?:title|#)[:\s]+(.+)$", text, re.MULTILINE)
    return list(dict.fromkeys(t.strip() for t in found))
