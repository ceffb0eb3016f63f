"""The demo model beyond document reviews: a question answered from tools, files and the thread; a JIRA triage;
an eval judge. Deterministic and computed from what the tools return (change a stub or a file and the answer
changes), and it follows the two prompt instructions evals probe: cite sources, suggest a priority.

Like a careful model under a tight budget, it keeps what it found in ``NOTES`` lines of its own messages, so the
evidence survives masking and compaction; when a detail is not in view it searches the run's files (attachments,
masked outputs and compaction archives) for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..context.history import FOLD_MARK, STATUS_MARK, SUMMARY_MARK
from ..messages import text_of, tool_names
from .acting import Asked, outcome
from .memory import continuation, furthest_call
from .steps import Reply, ScriptedCall, ScriptedRequest
from .words import ASKED, goes_on, own_words, person_request, spoken, told, turn_words
from .words import distinctive as _distinctive
from .words import phrases as _phrases
from .words import score as _score
from .words import terms as _terms

FILE_ROW = re.compile(r'^- (file-[0-9a-f]+): "((?:[^"\\]|\\.)*)" \("([^"]*)", ([\d,]+) bytes, (\w+)\)', re.MULTILINE)
NOTE = re.compile(r"^NOTES evidence (\{.*\})$", re.MULTILINE)
PROGRESS = re.compile(r"^NOTES progress (\{.*\})$", re.MULTILINE)
REQUEST = re.compile(r"^NOTES request (\{.*\})$", re.MULTILINE)
RANGE = re.compile(r"\bpages? (\d+) (?:to|-|\u2013|through) (\d+)\b", re.IGNORECASE)
SEARCHED = {"query", "q", "search", "text", "jql", "keywords", "terms", "question", "topic", "prompt", "task"}
JUDGE_START = "You are grading an assistant's answer"
RUNTIME_TOOLS = {"file_read", "file_regex", "extract_file", "load_file", "peek_file", "load_skill", "python",
                 "subagent", "load_skill_file"}  # fmt: skip # a table: names


LIMIT_MARK = "The workflow's "  # the loop's notes at a limit (tool calls, spend): "... no more tools can run"


def handles(request: ScriptedRequest) -> bool:
    """Requests this module answers (the rest are document reviews)."""
    if request.system_text().startswith(JUDGE_START) or "jira_issue" in request.tool_names:
        return True
    declared = [name for name in request.tool_names if name not in RUNTIME_TOOLS]
    question = _question(request)
    if re.search(r"\breview", question, re.IGNORECASE) and not declared:
        return False  # a review of documents (demo.py)
    return bool(declared) or question.rstrip().endswith("?") or len(_turns(request)) > 1


def respond(request: ScriptedRequest) -> Reply:
    """A question answered from evidence (a JIRA triage and an eval's judge are ``triage``'s)."""
    return _answer(request)


def thinking(notes: str) -> str | None:
    """Notes kept as a reasoning model keeps its thinking: a block that opens the reply, in the history (so
    compaction's summary carries them) and never shown to people (``models.reasoning``)."""
    return f"<think>\n{notes.strip()}\n</think>" if notes.strip() else None


# A question answered from evidence --------------------------------------------------------------------------


def _answer(request: ScriptedRequest) -> Reply:
    unread = _unread_summary(request)
    if unread:  # the summary of what came before is in a file: read it before anything else
        return Reply(calls=(ScriptedCall("file_read", unread),))
    question = _question(request)
    terms = _terms(spoken(question))  # the person's words, never the runtime's lines around them
    fresh = _fresh_evidence(request, terms)
    notes = "\n".join(f"NOTES evidence {json.dumps(item)}" for item in fresh)
    call = _next_call(request, question, terms)
    if call is not None:
        values = list(call.arguments.values()) if isinstance(call.arguments, dict) else []
        if RANGE.search(question) and len(values) == 1 and isinstance(values[0], int):
            # Where it is in a long loop and what it was asked, noted so compaction keeps them (the calls and the
            # question itself leave the window).
            notes += f"\nNOTES progress {json.dumps({'tool': call.name, 'done': values[0]})}"
            if not any(REQUEST.search(text_of(m)) for m in request.messages):
                notes += f"\nNOTES request {json.dumps({'text': question})}"
        return Reply(text=thinking(notes), calls=(call,))
    evidence = [*_noted(request), *fresh, *_thread_evidence(request, question, terms)]
    return Reply(text=_compose(request, evidence, terms))


def _next_call(request: ScriptedRequest, question: str, terms: list[str]) -> ScriptedCall | None:
    done = _calls_made(request)
    tools = {t["function"]["name"]: t["function"] for t in request.body.get("tools", [])}
    pages = RANGE.search(question)
    asked = _asked(request, question)
    for name in asked.order([name for name in tools if name not in RUNTIME_TOOLS]):
        for args in _arguments(tools[name], question, terms, request, pages, asked):
            if (name, json.dumps(args, sort_keys=True)) not in done:
                return ScriptedCall(name, args)
    return _file_call(request, terms, done)


def _asked(request: ScriptedRequest, question: str) -> Asked:
    return Asked.of(request.system_text(), spoken(own_words(question)), request.tool_names)


def _arguments(
    spec: dict[str, Any],
    question: str,
    terms: list[str],
    request: ScriptedRequest,
    pages: re.Match[str] | None,
    asked: Asked,
) -> Iterable[dict[str, Any]]:
    """The calls worth making to a tool, from its schema: every page of a range, a search on the terms, a
    fetch of what a search found, a named tool given what the request names (``acting``)."""
    props = spec.get("parameters", {}).get("properties", {})
    required = spec.get("parameters", {}).get("required", [])
    numbers = [p for p in required if props.get(p, {}).get("type") == "integer"]
    if numbers and pages:
        low, high = int(pages.group(1)), int(pages.group(2))
        start = max(low, _progress(request, spec.get("name", "")) + 1)
        return [{numbers[0]: n} for n in range(start, min(high, low + 200) + 1)]
    if not required:
        return [{}]
    args: dict[str, Any] = {}
    for name in required:
        lowered = name.lower()
        if lowered in ("id", "url", "page_id", "key", "uri"):
            found = _found_ids(request, terms)
            if not found:
                return []
            return [{name: value} for value in found[:2]]
        if lowered in SEARCHED and (query := asked.query(spec["name"], name)):  # the prompt's, else their words
            args[name] = query
        elif (value := asked.value(spec["name"], name, props.get(name, {}), _tool_texts(request))) is not None:
            args[name] = value
        else:  # never a value the request does not name (a restart of "INFO file-…" was one)
            return []
    return [args]


def _progress(request: ScriptedRequest, tool: str) -> int:
    """The last value of a range already done: from the progress notes (in the window or a summary), or the
    furthest call of the range still in view (a compaction may have taken the notes that said so)."""
    done = [
        json.loads(m)["done"]
        for message in request.messages
        for m in PROGRESS.findall(_unnumbered(text_of(message)))
        if json.loads(m).get("tool") == tool
    ]
    return int(max([*done, furthest_call(_calls_made(request), tool)]))


def _found_ids(request: ScriptedRequest, terms: list[str]) -> list[str]:
    """Ids or URLs in earlier results, the lines sharing most terms with the question first."""
    scored = []
    for text in _tool_texts(request):
        for line in text.splitlines():
            match = re.search(r"(https?://\S+|\bid[:=]\s*\"?([\w-]+))", line)
            if match:
                scored.append((-_score(line, terms), match.group(2) or match.group(1).rstrip(').,"')))
    return list(dict.fromkeys(value for _, value in sorted(scored, key=lambda s: s[0])))


def _file_call(request: ScriptedRequest, terms: list[str], done: set[tuple[str, str]]) -> ScriptedCall | None:
    """Search each file: first for the question's phrases (two words side by side), then, if that found
    nothing, for its distinctive words. A binary document is extracted first."""
    if "file_regex" not in request.tool_names:
        return None
    words = "|".join(re.escape(t) for t in _distinctive(terms)[:4])
    patterns = [p for p in (_phrases(spoken(_question(request))), words) if p]
    searches = _searches(request)
    extracted = {json.loads(args).get("id") for name, args in done if name == "extract_file"}
    noted = bool(_noted(request))
    for fid, _, mimetype, _, source in FILE_ROW.findall(request.system_text()) + _new_files(request):
        if source == "virtual" and fid in _question_files(request):
            continue
        if source == "archive" and noted:  # what it already saw, and its notes kept what bore on the question
            continue
        if not _textual(mimetype, source):
            if fid not in extracted and "extract_file" in request.tool_names:
                return ScriptedCall("extract_file", {"id": fid})
            continue
        tried = searches.get(fid, [])
        if len(tried) < len(patterns) and all(" 0 matching line" in result for result in tried):
            args = {"id": fid, "pattern": patterns[len(tried)], "ignore_case": True, "max_matches": 20, "context": 1}
            return ScriptedCall("file_regex", args)
    return None


def _searches(request: ScriptedRequest) -> dict[str, list[str]]:
    """The file_regex results so far, by file id (what the window still shows of them)."""
    found: dict[str, list[str]] = {}
    for fid, result in _file_calls(request, "file_regex"):
        found.setdefault(fid, []).append(result or "")
    return found


def _file_calls(request: ScriptedRequest, tool: str) -> list[tuple[str, str | None]]:
    """Each call of a file tool still in the window: the file id, and its result (None: no longer shown)."""
    results = {m.get("tool_call_id"): text_of(m) for m in request.messages if m["role"] == "tool"}
    return [
        (json.loads(call["function"]["arguments"] or "{}").get("id", ""), results.get(call["id"]))
        for message in request.messages
        for call in message.get("tool_calls", [])
        if call["function"]["name"] == tool
    ]


def _new_files(request: ScriptedRequest) -> list[tuple[str, str, str, str, str]]:
    """Files made during the run (extractions, masked outputs, archives), as the results named them."""
    found = []
    for text in _tool_texts(request):
        for fid in re.findall(r"\[extracted [^\]]*?file (file-[0-9a-f]+)", text):
            found.append((fid, "", "text/markdown", "0", "extracted"))
    for message in request.messages:  # "full text in archive file-…": what compaction took out of the window
        for fid in re.findall(r"\barchive (file-[0-9a-f]{6,})\b", text_of(message)):
            found.append((fid, "", "text/plain", "0", "archive"))
    return list(dict.fromkeys(found))


def _textual(mimetype: str, source: str) -> bool:
    return mimetype.startswith(("text/", "application/json")) or source in ("virtual", "extracted", "archive")


# Evidence ---------------------------------------------------------------------------------------------------


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
    results = request.tool_results()
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


# Helpers ----------------------------------------------------------------------------------------------------


SUMMARY_FILE = re.compile(r"^\[virtual file (file-[0-9a-f]+): compaction summary")
FOLDED_FILE = re.compile(r"^\[virtual file file-[0-9a-f]+: your earlier turns")  # its own turns, kept in a file


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


FOLDED_CALL = re.compile(r"^- (\w+) (\{.*?\}) → ", re.MULTILINE)


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


def _tool_texts(request: ScriptedRequest) -> list[str]:
    return [text_of(m) for m in request.messages if m["role"] == "tool"]
