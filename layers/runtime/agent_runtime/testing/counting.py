"""The demo model answering "how many …?" about what the thread read, as a careful model does: it counts the lines
that say the counted word, in the messages pasted earlier in the thread and in its files (searched with
``file_regex``), and answers with the counts; or it says plainly it cannot count that. A follow-up "how many
error lines in total?" after a log was read had been answered with the lines sharing a word with it (a CSV's
header).
"""

from __future__ import annotations

import json
import re

from ..messages import text_of
from .assistant import RUNTIME_TOOLS, SEARCHED
from .reading import FILE_ROW, _file_calls, _question, _turns
from .steps import Reply, ScriptedCall, ScriptedRequest
from .words import spoken

COUNT = re.compile(
    r"\bhow many\s+([a-z][a-z\s-]{0,60}?)(?:\s+(?:are|were|is|did|do|does|in|of|there)\b|[?.!,]|$)",
    re.IGNORECASE | re.MULTILINE,
)
GENERIC = {"line", "lines", "row", "rows", "entry", "entries", "time", "times", "message", "messages", "total", "the"}
MATCHES = re.compile(r": (\d+) matching line\(s\) for /.*?/( \(stopped at max_matches\))?")
MAX = 200  # file_regex's most matches: a count past it is "at least"
READABLE = ("attachment", "extracted")  # a file of the person's; a pasted message kept as a file is "virtual"


def respond(request: ScriptedRequest) -> Reply | None:
    """The next search for the counted word, or the answer with its counts; None: the question counts nothing."""
    word = counted(spoken(_question(request)))
    files = _files(request)
    if word is None or _searches_elsewhere(request) or not (files or len(_turns(request)) > 1):
        return None  # no count, or one a search tool of the workflow's answers, or nothing read to count in
    pattern = rf"\b{re.escape(word)}\b"
    searched = _searched(request, pattern)
    for fid, _ in files:
        if fid not in searched and "file_regex" in request.tool_names:
            return Reply(calls=(ScriptedCall("file_regex", _search(fid, pattern)),))
    counts = [(name, n) for fid, name in files if (n := searched.get(fid)) is not None]
    counts += _in_thread(request, pattern)
    found = [(name, n) for name, n in counts if n != "0"]
    if not found:
        where = "this thread's messages and files" if files else "this thread's messages"
        return Reply(text=f'I cannot answer that from what this thread read: no line of {where} says "{word}".')
    total = sum(int(n.rstrip("+")) for _, n in found)
    more = "at least " if any(n.endswith("+") for _, n in found) else ""
    parts = "; ".join(f"{n.replace('+', ' or more')} in {name}" for name, n in found)
    return Reply(text=f'{more}{total} line(s) say "{word}": {parts}.')


def _searches_elsewhere(request: ScriptedRequest) -> bool:
    """The workflow offers a search of its own (JIRA's, a wiki's): the count is that search's to give."""
    for spec in (t["function"] for t in request.body.get("tools", [])):
        required = spec.get("parameters", {}).get("required", [])
        if spec["name"] not in RUNTIME_TOOLS and any(p.lower() in SEARCHED for p in required):
            return True
    return False


def counted(question: str) -> str | None:
    """The word a "how many …?" counts ("how many error lines" → error); None: it asks no count."""
    found = COUNT.search(question)
    words = [w for w in re.findall(r"[a-z][a-z-]+", found.group(1).lower()) if w not in GENERIC] if found else []
    if not words:
        return None
    word = str(words[0])
    return word[:-1] if word.endswith("s") and not word.endswith("ss") and len(word) > 3 else word


def _files(request: ScriptedRequest) -> list[tuple[str, str]]:
    """The thread's files as people know them: its attachments by name, a pasted message kept as a file."""
    listed = "\n".join([request.system_text(), *(text_of(m) for m in request.messages if m["role"] == "user")])
    found = []
    for fid, name, _, _, source in FILE_ROW.findall(listed):
        if source in READABLE:
            found.append((fid, json.loads(f'"{name}"')))
    for fid in re.findall(r"\[virtual file (file-[0-9a-f]+): user message", listed):
        found.append((fid, "the message pasted in this thread"))
    return list(dict.fromkeys(found))


def _search(fid: str, pattern: str) -> dict[str, object]:
    return {"id": fid, "pattern": pattern, "ignore_case": True, "max_matches": MAX}


def _searched(request: ScriptedRequest, pattern: str) -> dict[str, str | None]:
    """The count each file's search for the pattern gave ("20", "200+"); None: its search failed or is not shown."""
    done: dict[str, str | None] = {}
    for fid, result in _file_calls(request, "file_regex"):
        found = MATCHES.search(result or "")
        if result is not None and f"for /{pattern}/" in result.splitlines()[0]:
            done[fid] = (found.group(1) + ("+" if found.group(2) else "")) if found else None
        elif result is not None and result.startswith("ERROR") and fid not in done:
            done[fid] = None
    return done


def _in_thread(request: ScriptedRequest, pattern: str) -> list[tuple[str, str]]:
    """The earlier messages of the thread (a log pasted short enough to stay in its message), counted there."""
    inline = [turn for turn in _turns(request)[:-1] if not turn.startswith("[virtual file ")]  # a kept one: its file
    said = [line for turn in inline for line in turn.splitlines() if not line.rstrip().endswith("?")]
    count = sum(1 for line in said if re.search(pattern, line, re.IGNORECASE))
    return [("the messages pasted in this thread", str(count))] if count else []
