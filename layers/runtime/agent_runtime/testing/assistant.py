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

from ..context.history import STATUS_MARK
from ..messages import text_of
from .steps import Reply, ScriptedCall, ScriptedRequest

FILE_ROW = re.compile(r'^- (file-[0-9a-f]+): "((?:[^"\\]|\\.)*)" \("([^"]*)", ([\d,]+) bytes, (\w+)\)', re.MULTILINE)
NOTE = re.compile(r"^NOTES evidence (\{.*\})$", re.MULTILINE)
IDENT = re.compile(r"\b(?:[A-Z][A-Z0-9]+-\d+|[A-Z]{3,}(?:_[A-Z]+)*)\b")
RANGE = re.compile(r"\bpages? (\d+) (?:to|-|\u2013|through) (\d+)\b", re.IGNORECASE)
STOP = {"about", "after", "again", "also", "answer", "attached", "before", "could", "every", "first", "from", "have",
        "here", "should", "tell", "that", "their", "there", "these", "this", "what", "when", "where", "which",
        "while", "with", "would", "please", "message", "thread", "gave", "give", "said", "says", "line", "file",
        "files", "read", "find", "them", "your", "does", "know", "team", "question", "exactly"}  # fmt: skip
JUDGE_START = "You are grading an assistant's answer"
RUNTIME_TOOLS = {"file_read", "file_regex", "extract_file", "load_file", "peek_file", "load_skill", "python",
                 "subagent", "load_skill_file"}  # fmt: skip


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
    if request.system_text().startswith(JUDGE_START):
        return _judge(request)
    if "jira_issue" in request.tool_names:
        return _triage(request)
    return _answer(request)


# A question answered from evidence --------------------------------------------------------------------------


def _answer(request: ScriptedRequest) -> Reply:
    question = _question(request)
    terms = _terms(question)
    fresh = _fresh_evidence(request, terms)
    notes = "\n".join(f"NOTES evidence {json.dumps(item)}" for item in fresh)
    call = _next_call(request, question, terms)
    if call is not None:
        return Reply(text=notes or None, calls=(call,))
    evidence = [*_noted(request), *fresh, *_thread_evidence(request, question, terms)]
    return Reply(text=_compose(request, evidence, terms))


def _next_call(request: ScriptedRequest, question: str, terms: list[str]) -> ScriptedCall | None:
    done = _calls_made(request)
    tools = {t["function"]["name"]: t["function"] for t in request.body.get("tools", [])}
    pages = RANGE.search(question)
    for name, spec in tools.items():
        if name in RUNTIME_TOOLS:
            continue
        for args in _arguments(spec, question, terms, request, pages):
            if (name, json.dumps(args, sort_keys=True)) not in done:
                return ScriptedCall(name, args)
    return _file_call(request, terms, done)


def _arguments(spec: dict[str, Any], question: str, terms: list[str], request: ScriptedRequest,
               pages: re.Match[str] | None) -> Iterable[dict[str, Any]]:  # fmt: skip
    """The calls worth making to a tool, from its schema: every page of a range, a search on the terms, a
    fetch of what a search found."""
    props = spec.get("parameters", {}).get("properties", {})
    required = spec.get("parameters", {}).get("required", [])
    numbers = [p for p in required if props.get(p, {}).get("type") == "integer"]
    if numbers and pages:
        low, high = int(pages.group(1)), int(pages.group(2))
        return [{numbers[0]: n} for n in range(low, min(high, low + 200) + 1)]
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
        args[name] = " ".join(terms[:4]) if lowered != "jql" else f'text ~ "{" ".join(terms[:3])}"'
    return [args]


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
    if "file_regex" not in request.tool_names:
        return None
    pattern = "|".join(re.escape(t) for t in _distinctive(terms)[:4])
    if not pattern:
        return None
    searched = {json.loads(args).get("id") for name, args in done if name == "file_regex"}
    extracted = {json.loads(args).get("id") for name, args in done if name == "extract_file"}
    for fid, _, mimetype, _, source in FILE_ROW.findall(request.system_text()) + _new_files(request):
        if fid in searched or (source == "virtual" and fid in _question_files(request)):
            continue
        if not _textual(mimetype, source):
            if fid not in extracted and "extract_file" in request.tool_names:
                return ScriptedCall("extract_file", {"id": fid})
            continue
        return ScriptedCall("file_regex", {"id": fid, "pattern": pattern, "ignore_case": True, "max_matches": 20})
    return None


def _new_files(request: ScriptedRequest) -> list[tuple[str, str, str, str, str]]:
    """Files made during the run (extractions, masked outputs, archives), as the results named them."""
    found = []
    for text in _tool_texts(request):
        for fid in re.findall(r"\[extracted [^\]]*?file (file-[0-9a-f]+)", text):
            found.append((fid, "", "text/markdown", "0", "extracted"))
    for message in request.messages:
        for fid in re.findall(r"\b(file-[0-9a-f]{6,})\b.{0,40}(?:archive|masked|offloaded)", text_of(message)):
            found.append((fid, "", "text/plain", "0", "archive"))
    return list(dict.fromkeys(found))


def _textual(mimetype: str, source: str) -> bool:
    return mimetype.startswith(("text/", "application/json")) or source in ("virtual", "extracted", "archive")


# Evidence ---------------------------------------------------------------------------------------------------


def _fresh_evidence(request: ScriptedRequest, terms: list[str]) -> list[dict[str, Any]]:
    calls = {c["id"]: c["function"]["name"] for m in request.messages for c in m.get("tool_calls", [])}
    found = []
    for call_id, text in request.tool_results().items():
        lines = [line.strip() for line in text.splitlines() if _score(line, terms) > 0 and _content(line)]
        best = sorted(lines, key=lambda line: -_score(line, terms))[:4]
        if best:
            found.append({"source": calls.get(call_id, "tool"), "lines": [line[:300] for line in best]})
    return found


def _content(line: str) -> bool:
    """A line that says something: not a heading, a search hit's listing or a tool's own header."""
    stripped = line.strip()
    return not (re.match(r"#|id:\s", stripped) or (stripped.startswith("[") and stripped.endswith("]")))


def _noted(request: ScriptedRequest) -> list[dict[str, Any]]:
    return [json.loads(m) for message in request.messages if message["role"] == "assistant"
            for m in NOTE.findall(text_of(message))]  # fmt: skip


def _thread_evidence(request: ScriptedRequest, question: str, terms: list[str]) -> list[dict[str, Any]]:
    """What earlier messages of the thread said (the question itself is no evidence)."""
    lines = [line.strip() for turn in _turns(request)[:-1] for line in turn.splitlines()
             if _score(line, terms) > 0 and _content(line)]  # fmt: skip
    return [{"source": "this thread", "lines": lines[:4]}] if lines else []


def _compose(request: ScriptedRequest, evidence: list[dict[str, Any]], terms: list[str]) -> str:
    ranked = sorted(((_score(line, terms), item["source"], line) for item in evidence for line in item["lines"]),
                    key=lambda row: -row[0])  # fmt: skip
    if not ranked:
        searched = ", ".join(sorted({name for name, _ in _calls_made(request)})) or "nothing"
        return f"I could not find an answer to that (searched with: {searched}; terms: {', '.join(terms[:6])})."
    top = list(dict.fromkeys((source, line) for _, source, line in ranked))[:4]
    out = ["Here is what I found:"] + [f"• {line} (from {source})" for source, line in top]
    if "cite" in request.system_text().lower():
        titles = _titles(request) or sorted({source for source, _ in top})
        out.append("Sources: " + "; ".join(titles[:3]))
    return "\n".join(out)


def _titles(request: ScriptedRequest) -> list[str]:
    found = []
    for text in _tool_texts(request):
        found += re.findall(r"^(?:title|#)[:\s]+(.+)$", text, re.MULTILINE)
    return list(dict.fromkeys(t.strip() for t in found))


# JIRA triage ------------------------------------------------------------------------------------------------


def _triage(request: ScriptedRequest) -> Reply:
    texts = dict(_results_by_tool(request))
    issue = texts.get("jira_issue")
    if issue is None:
        asked = IDENT.search(_question(request))
        return Reply(calls=(ScriptedCall("jira_issue", {"key": asked.group(0)} if asked else {}),))
    head = re.match(r"# ([A-Z][A-Z0-9]+-\d+): (.*)", issue)
    key, summary = (head.group(1), head.group(2)) if head else ("the issue", "")
    words = [w for w in _terms(summary) if not IDENT.fullmatch(w)][:3]
    if "jira_search" not in texts and "jira_search" in request.tool_names:
        project = key.split("-")[0]
        jql = f'project = {project} AND text ~ "{" ".join(words)}" ORDER BY created DESC'
        return Reply(calls=(ScriptedCall("jira_search", {"jql": jql}),))
    return Reply(text=_triage_text(request, key, summary, issue, texts.get("jira_search", "")))


def _triage_text(request: ScriptedRequest, key: str, summary: str, issue: str, search: str) -> str:
    terms = set(_terms(summary))
    duplicates = []
    for line in search.splitlines():
        match = re.match(r"([A-Z][A-Z0-9]+-\d+): (.*)", line)
        if match and match.group(1) != key:
            shared = sorted(terms & set(_terms(match.group(2))))
            if len(shared) >= 2:
                duplicates.append(f"{match.group(1)} ({match.group(2).strip()}; shares: {', '.join(shared)})")
    text = issue.lower()
    missing = [what for what, words in (("steps to reproduce", ("steps", "reproduce")), ("versions", ("version",)),
               ("logs", ("log", "trace", "error"))) if not any(w in text for w in words)]  # fmt: skip
    out = [f"*Triage of {key}*: {summary}",
           "• Likely duplicates: " + ("; ".join(duplicates) if duplicates else "none found"),
           "• Missing to act on it: " + (", ".join(missing) if missing else "nothing obvious")]  # fmt: skip
    if "priority" in request.system_text().lower():
        urgent = any(w in text for w in ("outage", "data loss", "lost", "all customers", "security", "down"))
        component = re.search(r"labels: ([\w-]+)", issue)
        out.append(f"• Suggested priority: {'High' if urgent else 'Medium'}"
                   f"{' (it reports lost data or an outage)' if urgent else ''}; component: "
                   f"{component.group(1) if component else 'unknown'}")  # fmt: skip
    return "\n".join(out)


# The judge --------------------------------------------------------------------------------------------------


def _judge(request: ScriptedRequest) -> Reply:
    """Passes when most of the rubric's content words appear in the answer: crude, but it reads both."""
    text = request.last_user_text()
    rubric = text.split("# Request", 1)[0].removeprefix("# Rubric").strip()
    answer = text.split("# Answer", 1)[-1].lower()
    words = sorted({_stem(w.lower()) for w in _terms(rubric)})
    present = [w for w in words if w in answer]
    verdict = bool(words) and len(present) >= 0.6 * len(words)
    missing = sorted(set(words) - set(present))
    reason = f"(demo judge) {len(present)} of {len(words)} rubric terms in the answer" + (
        f"; missing: {', '.join(missing[:6])}" if missing else ""
    )
    return Reply(text=json.dumps({"pass": verdict, "reason": reason}))


# Helpers ----------------------------------------------------------------------------------------------------


def _turns(request: ScriptedRequest) -> list[str]:
    """The person's messages, oldest first, without the context status."""
    out = []
    for message in request.messages:
        if message["role"] == "user":
            text = text_of(message).split("\n\n" + STATUS_MARK, 1)[0]
            if not text.startswith(STATUS_MARK):
                out.append(text)
    return out


def _question(request: ScriptedRequest) -> str:
    turns = _turns(request)
    return turns[-1].split("[the message to answer]\n", 1)[-1] if turns else ""


def _question_files(request: ScriptedRequest) -> set[str]:
    return set(re.findall(r"\[virtual file (file-[0-9a-f]+): user message", _question(request)))


def _terms(text: str) -> list[str]:
    idents = IDENT.findall(text)
    quoted = re.findall(r'"([^"]{3,40})"', text)
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", text) if w.lower() not in STOP]
    return list(dict.fromkeys([*idents, *quoted, *(w.lower() for w in words)]))


def _distinctive(terms: list[str]) -> list[str]:
    """Identifiers and quoted phrases first (what a person would grep for), then the longer words."""
    strong = [t for t in terms if IDENT.fullmatch(t) or " " in t]
    return strong + sorted((t for t in terms if t not in strong), key=len, reverse=True)


def _score(line: str, terms: list[str]) -> int:
    lowered = line.lower()
    return sum((3 if IDENT.fullmatch(t) else 1) for t in terms if t.lower() in lowered)


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _calls_made(request: ScriptedRequest) -> set[tuple[str, str]]:
    made = set()
    for message in request.messages:
        for call in message.get("tool_calls", []):
            args = json.loads(call["function"]["arguments"] or "{}")
            made.add((call["function"]["name"], json.dumps(args, sort_keys=True)))
    return made


def _tool_texts(request: ScriptedRequest) -> list[str]:
    return [text_of(m) for m in request.messages if m["role"] == "tool"]


def _results_by_tool(request: ScriptedRequest) -> list[tuple[str, str]]:
    names = {c["id"]: c["function"]["name"] for m in request.messages for c in m.get("tool_calls", [])}
    return [(names.get(m.get("tool_call_id", ""), ""), text_of(m)) for m in request.messages if m["role"] == "tool"]
