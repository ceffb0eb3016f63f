"""The request as the demo model reads it: the person's turns and the question to answer (a compaction summary
standing for the request it kept, a "go on" for the one before it), its own calls so far (those a fold lists
too), and what the file tools returned, by file id. Nothing here decides what to do or say (``assistant``).
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..context.history import FOLD_MARK, STATUS_MARK, SUMMARY_MARK
from ..messages import text_of
from .acting import Asked
from .memory import continuation
from .steps import ScriptedRequest
from .words import goes_on, own_words, person_request, spoken, turn_words

FILE_ROW = re.compile(r'^- (file-[0-9a-f]+): "((?:[^"\\]|\\.)*)" \("([^"]*)", ([\d,]+) bytes, (\w+)\)', re.MULTILINE)
REQUEST = re.compile(r"^NOTES request (\{.*\})$", re.MULTILINE)
RANGE = re.compile(r"\bpages? (\d+) (?:to|-|\u2013|through) (\d+)\b", re.IGNORECASE)
LIMIT_MARK = "The workflow's "  # the loop's notes at a limit (tool calls, spend): "... no more tools can run"
SUMMARY_FILE = re.compile(r"^\[virtual file (file-[0-9a-f]+): compaction summary")
FOLDED_FILE = re.compile(r"^\[virtual file file-[0-9a-f]+: your earlier turns")  # its own turns, kept in a file
FOLDED_CALL = re.compile(r"^- (\w+) (\{.*?\}) → ", re.MULTILINE)


def _asked(request: ScriptedRequest, question: str) -> Asked:
    return Asked.of(request.system_text(), spoken(own_words(question)), request.tool_names)


def _file_calls(request: ScriptedRequest, tool: str) -> list[tuple[str, str | None]]:
    """Each call of a file tool still in the window: the file id, and its result (None: no longer shown)."""
    results = {m.get("tool_call_id"): text_of(m) for m in request.messages if m["role"] == "tool"}
    return [
        (json.loads(call["function"]["arguments"] or "{}").get("id", ""), results.get(call["id"]))
        for message in request.messages
        for call in message.get("tool_calls", [])
        if call["function"]["name"] == tool
    ]


def _read_results(request: ScriptedRequest) -> dict[str, str]:
    """What file_read returned, by file id (as far as the window still shows it)."""
    found: dict[str, str] = {}
    for fid, result in _file_calls(request, "file_read"):
        if result is not None:
            found[fid] = found.get(fid, "") + _unnumbered(result)
    return found


def _unreadable(request: ScriptedRequest) -> dict[str, str]:
    """The files a file tool said it cannot read, and why (the first line of its error)."""
    found: dict[str, str] = {}
    for tool in ("file_read", "file_regex", "extract_file"):
        for fid, result in _file_calls(request, tool):
            if fid and result and result.startswith("ERROR"):
                found.setdefault(fid, result.removeprefix("ERROR:").strip().splitlines()[0][:240])
    return found


def _unnumbered(text: str) -> str:
    """file_read's text without its header and line numbers."""
    lines = text.splitlines()[1:] if text.startswith("[") else text.splitlines()
    return "\n".join(re.sub(r"^\d+\t", "", line) for line in lines)


def _unread_summary(request: ScriptedRequest) -> dict[str, Any] | None:
    """The file_read arguments of a summary kept in a file and not read yet (or the part a read said did not
    fit). One read is enough: its notes carry what it said, and a masked read is not a reason to read again."""
    read, made = _read_results(request), _calls_made(request)
    for message in request.messages:
        match = SUMMARY_FILE.match(text_of(message)) if message["role"] == "user" else None
        if match is None:
            continue
        fid = match.group(1)
        if not any(name == "file_read" and json.loads(args).get("id") == fid for name, args in made):
            return {"id": fid}
        if (more := continuation(fid, [read.get(fid, "")], made)) is not None:
            return more
    return None


def _turns(request: ScriptedRequest) -> list[str]:
    """The person's messages, oldest first, without the context status and what the runtime adds to them; a
    compaction summary stands for the request it kept."""

    out = []
    for message in request.messages:
        if message["role"] == "user":
            text = text_of(message).split("\n\n" + STATUS_MARK, 1)[0]
            pointer = SUMMARY_FILE.match(text)
            if pointer:
                text = _read_results(request).get(pointer.group(1), "")
            if text.startswith(SUMMARY_MARK) or pointer:
                text = person_request(text)
            text = turn_words(text.split(LIMIT_MARK, 1)[0])  # the runtime's "answer now" note is no one's request
            folded = text.startswith(FOLD_MARK) or FOLDED_FILE.match(text) is not None
            if text and not text.startswith(STATUS_MARK) and not folded:  # a fold holds its own earlier turns
                out.append(text)
    return out


def _question(request: ScriptedRequest) -> str:
    """The request to answer: the newest turn's, or, when it only asks to go on (after a Stop, a limit), the
    newest one before it that asks something."""
    kept = [
        json.loads(m)["text"] for message in request.messages for m in REQUEST.findall(_unnumbered(text_of(message)))
    ]
    turns = _turns(request)
    if kept and (not turns or not RANGE.search(turns[-1])):
        return str(kept[-1])
    asked = [turn.split("[the message to answer]\n", 1)[-1] for turn in turns]
    return next((turn for turn in reversed(asked) if not goes_on(turn)), asked[-1] if asked else "")


def _question_files(request: ScriptedRequest) -> set[str]:
    return set(re.findall(r"\[virtual file (file-[0-9a-f]+): user message", _question(request)))


def _calls_made(request: ScriptedRequest) -> set[tuple[str, str]]:
    """Its calls so far: in the window, and those folds list (``- tool {arguments} → …``)."""
    made = set()
    for message in request.messages:
        calls = [(c["function"]["name"], c["function"]["arguments"]) for c in message.get("tool_calls", [])]
        if text_of(message).startswith(FOLD_MARK):
            calls += FOLDED_CALL.findall(text_of(message))
        for name, arguments in calls:
            try:
                made.add((name, json.dumps(json.loads(arguments or "{}"), sort_keys=True)))
            except json.JSONDecodeError:
                continue
    return made


def _all_results(request: ScriptedRequest) -> dict[str, str]:
    """Every tool result the window shows, by call id (a Stop's or a limit's turn left its calls' results before the
    "go on" that resumes it: they are not the latest batch)."""
    return {str(m.get("tool_call_id", "")): text_of(m) for m in request.messages if m["role"] == "tool"}


def _results_since_asked(request: ScriptedRequest) -> dict[str, str]:
    """The results of the calls made since the person asked the question being answered: a "go on" keeps the calls
    before it, a new question does not."""
    start = 0
    for at, message in enumerate(request.messages):
        text = turn_words(text_of(message).split("\n\n" + STATUS_MARK, 1)[0]) if message["role"] == "user" else ""
        if text and not text.startswith(STATUS_MARK) and not goes_on(text):
            start = at
    return {key: text for key, text in _all_results(request).items() if _index(request, key) > start}


def _index(request: ScriptedRequest, call_id: str) -> int:
    return next((at for at, m in enumerate(request.messages) if m.get("tool_call_id") == call_id), -1)


def _tool_texts(request: ScriptedRequest) -> list[str]:
    return [text_of(m) for m in request.messages if m["role"] == "tool"]
