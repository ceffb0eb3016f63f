"""The demo model beyond document reviews: a question answered from tools, files and the thread; a JIRA triage;
an eval judge. Deterministic and computed from what the tools return (change a stub or a file and the answer
changes), and it follows the two prompt instructions evals probe: cite sources, suggest a priority.

Like a careful model under a tight budget, it keeps what it found in ``NOTES`` lines of its own messages, so the
evidence survives masking and compaction; when a detail is not in view it searches the run's files (attachments,
masked outputs and compaction archives) for it. This module decides the next call; the request as read is
``reading``'s, the answer from the evidence ``evidence``'s.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from ..messages import text_of
from .acting import Asked
from .evidence import _compose, _fresh_evidence, _noted, _thread_evidence
from .memory import furthest_call
from .pasted import inline_notes
from .reading import (
    FILE_ROW,
    REQUEST,
    _asked,
    _calls_made,
    _file_calls,
    _question_files,
    _tool_texts,
    _turns,
    _unnumbered,
    _unread_summary,
)
from .reading import RANGE as RANGE  # direct.py takes these from here
from .reading import _question as _question
from .steps import Reply, ScriptedCall, ScriptedRequest
from .words import distinctive as _distinctive
from .words import phrases as _phrases
from .words import score as _score
from .words import spoken
from .words import terms as _terms

PROGRESS = re.compile(r"^NOTES progress (\{.*\})$", re.MULTILINE)
SEARCHED = {"query", "q", "search", "text", "jql", "keywords", "terms", "question", "topic", "prompt", "task"}
JUDGE_START = "You are grading an assistant's answer"
RUNTIME_TOOLS = {"file_read", "file_regex", "extract_file", "load_file", "peek_file", "load_skill", "python",
                 "subagent", "load_skill_file"}  # fmt: skip # a table: names


def handles(request: ScriptedRequest) -> bool:
    """Requests this module answers (the rest are document reviews)."""
    if request.system_text().startswith(JUDGE_START) or "jira_issue" in request.tool_names:
        return True
    declared = [name for name in request.tool_names if name not in RUNTIME_TOOLS]
    question = _question(request)
    if re.search(r"\breview", question, re.IGNORECASE) and not declared:
        return False  # a review of documents (demo.py)
    asks = question.rstrip().endswith("?") and not _pasted_alone(request, question)
    return bool(declared) or asks or len(_turns(request)) > 1


def _pasted_alone(request: ScriptedRequest, question: str) -> bool:
    """A paste in the message with nothing attached (a document's open questions end it): reviewed (``demo``),
    not taken for a question because its last line asks one."""
    return not FILE_ROW.search(request.system_text()) and bool(inline_notes(question))


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
