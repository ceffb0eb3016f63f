"""The embedded demo model: a scripted assistant that really reads the run's files and reviews them.

It works the way a careful model does under a tight context budget: it keeps short ``NOTES`` lines in its own
messages' reasoning (a ``<think>`` block: they survive compaction, and people never see them), searches the
ticket's pasted log (a virtual file) with ``file_regex``, reads a range around the first error, reads the small
documents, lists a large reference's sections with ``file_regex`` and reads the relevant ones by line range. When
the context engine asks for a summary, it carries its notes forward. Its answer is computed from what the tools
returned: change the files and it changes.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from ..messages import text_of
from . import assistant, counting, direct, failure, incident, instructed, memory, payload, reading, triage
from .pasted import INLINE, STOP, inline_notes, pasted_note, prose
from .shaped import asked_schema, shaped_reply
from .steps import Reply, ScriptedCall, ScriptedRequest, Step
from .tables import is_table, table_note, tables_answer
from .words import ASKED, own_words, person_request, score, terms, told

_FILE_ROW = re.compile(r'^- (file-[0-9a-f]+): "((?:[^"\\]|\\.)*)" \("[^"]*", ([\d,]+) bytes', re.MULTILINE)
_TICKET = re.compile(r"\[virtual file (file-[0-9a-f]+): user message")
_NOTE = re.compile(r"^NOTES (\S+) (\{.*\})$", re.MULTILINE)
_ROW = re.compile(r"^\s*(\d+)[:\-\t]\t?(.*)$")
BIG_FILE = 20_000  # bytes: larger references are searched and read by section, not read whole
MAX_DEMO_STEPS = 300  # a run's model calls: a long tool loop (an eval's 200 pages) fits
HELPER_PROMPT_START = "You are a helper agent"
FILE_READERS = {"file_read", "file_regex"}  # an error of these on a file: the file cannot be read


def demo_script() -> list[Step]:
    """Enough responder steps for any demo run; unused ones are fine here (the demo does not assert)."""
    return [respond] * MAX_DEMO_STEPS


def respond(request: ScriptedRequest) -> Reply:
    if request.is_compaction():
        return _summary(request)
    if request.system_text().startswith(HELPER_PROMPT_START):
        return _helper(request)
    if (asked := asked_schema(request)) is not None:  # a script's run.ask(..., schema=...): JSON of that shape
        return shaped_reply(*asked)
    if (led := _led(request)) is not None:
        return led
    if assistant.handles(request):  # questions, triage, an eval's judge: not a document review
        reply = triage.respond(request) or incident.respond(request) or instructed.respond(request)
        reply = reply or direct.respond(request) or counting.respond(request) or assistant.respond(request)
        if _told_to_answer(request) and reply.calls:  # as a real model does: no call when none may be made
            return Reply(text=reply.text or "(demo model) I stopped before I could finish reading.")
        return reply
    files = [
        (fid, json.loads(f'"{name}"'), int(size.replace(",", "")))
        for fid, name, size in _FILE_ROW.findall(request.system_text())
    ]
    ticket = _TICKET.search(next((text_of(m) for m in request.messages if m["role"] == "user"), ""))
    if not files and not ticket:
        return _inline(reading._question(request))
    if "file_read" not in request.tool_names:
        return Reply(text="(demo model) This workflow offers no file tools, so I cannot read the files.")
    fresh = _new_notes(request, ticket.group(1) if ticket else None, files)
    notes = {**_notes(request), **{key: value for key, value in fresh}}
    calls = (
        []
        if _told_to_answer(request)
        else _next_calls(notes, files, ticket.group(1) if ticket else None, request.tool_names)
    )
    lines = "\n".join(f"NOTES {key} {json.dumps(value)}" for key, value in fresh)
    if calls:
        return Reply(text=assistant.thinking(lines), calls=tuple(calls))
    if ticket and not files and f"doc:{ticket.group(1)}" in notes:
        return Reply(text=_review(notes, [(ticket.group(1), "", 0)]))  # the paste is a document, not a log
    if "ticket-errors" in notes and not any(key.startswith("doc:") for key in notes):
        return Reply(text=incident.from_log(own_words(reading._question(request)), notes))  # the paste is the document
    return Reply(text=_review(notes, files))


def _led(request: ScriptedRequest) -> Reply | None:
    """What the prompt or the question leads to, whatever is attached: a JSON delivery the prompt names (its
    fields, as the prompt asks); the log a "what went wrong?" is about (an attached table had taken it for a
    document to review)."""
    may_call = not _told_to_answer(request)
    if (delivery := payload.respond(request, may_call=may_call)) is not None:
        return delivery
    return None if triage.owns(request) else failure.respond(request, may_call=may_call)


def _inline(message: str) -> Reply:
    """A message with nothing attached and no paste kept as a file: a paste short enough to stay in it is read
    there, and reviewed (or its log read) as a kept one is."""
    notes = inline_notes(message)
    if INLINE in notes:
        return Reply(text=_review(notes, [(INLINE.removeprefix("doc:"), "", 0)]))
    if "ticket-errors" in notes:
        return Reply(text=incident.from_log(prose(message), notes))
    return Reply(text="(demo model) Nothing is attached to this run, so there is nothing to review.")


def _told_to_answer(request: ScriptedRequest) -> bool:
    """``tool_choice: none``: the run's last answer (a limit was reached): answer with what is known."""
    return request.body.get("tool_choice") == "none"


# What has been learned --------------------------------------------------------------------------------------


def _notes(request: ScriptedRequest) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for message in request.messages:
        if message["role"] in ("assistant", "user"):
            for key, value in _NOTE.findall(text_of(message)):
                found[key] = json.loads(value)
    return found


def _new_notes(
    request: ScriptedRequest, ticket: str | None, files: list[tuple[str, str, int]]
) -> list[tuple[str, Any]]:
    results = request.tool_results()
    calls = {}
    for message in request.messages:
        for call in message.get("tool_calls", []):
            calls[call["id"]] = (call["function"]["name"], json.loads(call["function"]["arguments"] or "{}"))
    names = {fid: name for fid, name, _ in files}
    notes: list[tuple[str, Any] | None] = []
    for call_id, text in results.items():
        name, args = calls.get(call_id, ("", {}))
        if name == "python":  # noted even when it failed, so it is not retried forever
            notes.append(("ticket-stats", _stats(text)))
            continue
        if text.startswith("ERROR"):  # noted as unreadable, so it is not read again, and the review says so
            notes.append(_unreadable(args.get("id"), text, names) if name in FILE_READERS else None)
            continue
        rows = [(int(m.group(1)), m.group(2)) for m in map(_ROW.match, text.splitlines()[1:]) if m]
        notes.append(_note_for(name, args, rows, text, ticket, names))
    return [note for note in notes if note is not None]


def _unreadable(file_id: Any, text: str, names: dict[str, str]) -> tuple[str, Any] | None:
    if not isinstance(file_id, str) or not file_id:
        return None
    why = text.removeprefix("ERROR:").strip().splitlines()[0] if text.strip() else "it could not be read"
    name = names.get(file_id, "a file kept for this run")
    return f"unreadable:{file_id}", {"name": name, "why": told(why, name)[:240]}


def _note_for(
    name: str, args: dict[str, Any], rows: list[tuple[int, str]], text: str, ticket: str | None, names: dict[str, str]
) -> tuple[str, Any] | None:
    file_id = args.get("id", "")
    if file_id == ticket and name == "file_regex":
        return "ticket-errors", {"file": file_id, "lines": rows[:20]}
    if file_id == ticket and "start_line" not in args:  # read whole: it had no error line
        note = pasted_note(rows)
        return ("ticket-log" if note["log"] else f"doc:{file_id}"), note
    if file_id == ticket:
        return "ticket-excerpt", {"from": rows[0][0] if rows else 0, "errors": [r for r in rows if "ERROR" in r[1]]} | {
            "before": [r for r in rows if "ERROR" not in r[1]][-3:]  # what led to the first error
        }
    if name == "subagent":
        rules = [line.split(" :: ", 1) for line in text.splitlines() if line.startswith("RULE ") and " :: " in line]
        return f"summary:{args['files'][0]}", {"rules": [[h[5:], r] for h, r in rules]}
    if name == "file_regex":
        scanned = re.search(r"([\d,]+) lines scanned", text)
        total = int(scanned.group(1).replace(",", "")) if scanned else 0
        return f"toc:{file_id}", {"sections": rows, "total": total}
    if "start_line" in args:  # a section of a large reference (small documents are read whole)
        found = [t.split(":**", 1)[1].strip() for _, t in rows if "**Rule" in t and ":**" in t]
        return f"section:{file_id}:{args['start_line']}", {
            "heading": rows[0][1].lstrip("# ") if rows else "",
            "rules": found,
        }
    if is_table(names.get(file_id, ""), "\n".join(line for _, line in rows)):  # data, never reviewed as prose
        return f"data:{file_id}", table_note(names.get(file_id, "the table"), rows)
    return f"doc:{file_id}", pasted_note(rows) | {"name": names.get(file_id, file_id)}  # "log": a log's lines


# What to do next --------------------------------------------------------------------------------------------


def _next_calls(
    notes: dict[str, Any], files: list[tuple[str, str, int]], ticket: str | None, tools: list[str]
) -> list[ScriptedCall]:
    if ticket and f"unreadable:{ticket}" in notes:
        ticket = None  # the pasted log could not be searched: the review says so
    if ticket and "ticket-errors" not in notes:
        return [ScriptedCall("file_regex", {"id": ticket, "pattern": r"\bERROR\b", "max_matches": 20})]
    if ticket and "ticket-excerpt" not in notes and notes["ticket-errors"]["lines"]:
        first = notes["ticket-errors"]["lines"][0][0]
        return [ScriptedCall("file_read", {"id": ticket, "start_line": max(1, first - 3), "end_line": first + 5})]
    if ticket and not files and not notes["ticket-errors"]["lines"] and not {f"doc:{ticket}", "ticket-log"} & {*notes}:
        return [ScriptedCall("file_read", {"id": ticket})]  # no error line: a document, or a log that went well?
    if ticket and f"doc:{ticket}" in notes:
        return []  # a pasted document: reviewed as it is, nothing in it to compute
    if ticket and "python" in tools and "ticket-stats" not in notes:  # numbers are computed, never guessed
        return [ScriptedCall("python", {"code": LOG_STATS, "files": [ticket]})]
    small = [
        ScriptedCall("file_read", {"id": fid})
        for fid, _, size in files
        if size < BIG_FILE and not {f"doc:{fid}", f"data:{fid}", f"unreadable:{fid}"} & {*notes}
    ]
    if small:
        return small
    subject_words: list[str] = next((n["words"] for k, n in notes.items() if k.startswith("doc:")), [])
    for fid, _, size in files:
        if size >= BIG_FILE and f"summary:{fid}" not in notes:  # a large reference goes to a helper
            task = f"List the rules in this file that apply to a design about: {' '.join(subject_words[:60])}"
            return [ScriptedCall("subagent", {"task": task, "files": [fid], "skills": ["large-files"]})]
    return []


LOG_STATS = """\
import os, re, statistics

text = open(os.listdir(".")[0], encoding="utf-8").read()
latencies = [int(ms) for ms in re.findall(r"latency_ms=(\\d+)", text)]
deliveries = len(re.findall(r"webhook\\.delivery", text))
errors = len(re.findall(r"\\bERROR\\b", text))
{
    "deliveries": deliveries,
    "errors": errors,
    "error_rate_pct": round(100 * errors / max(deliveries, 1), 2),
    "p50_ms": round(statistics.median(latencies)),
    "p95_ms": round(statistics.quantiles(latencies, n=20)[-1]),
}
"""


def _stats(text: str) -> dict[str, Any] | None:
    line = next((row for row in text.splitlines() if row.startswith("result: ")), None)
    try:
        value = json.loads(line[len("result: ") :]) if line else None
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _helper(request: ScriptedRequest) -> Reply:
    """A sub-agent: read the large file section by section, answer with the rules that apply."""
    files = [
        (fid, json.loads(f'"{name}"'), int(size.replace(",", "")))
        for fid, name, size in _FILE_ROW.findall(request.system_text())
    ]
    task = next((text_of(m) for m in request.messages if m["role"] == "user"), "")
    words = sorted(set(re.findall(r"[a-z]{5,}", task.split("about:", 1)[-1].lower())) - STOP)
    fresh = _new_notes(request, None, files)
    notes = {"doc:task": {"words": words}, **_notes(request), **{key: value for key, value in fresh}}
    lines = "\n".join(f"NOTES {key} {json.dumps(value)}" for key, value in fresh)
    call = next((c for fid, _, _ in files if (c := _next_section(notes, fid)) is not None), None)
    if call is not None and not _told_to_answer(request):
        return Reply(text=assistant.thinking(lines), calls=(call,))
    rules = [(n["heading"], rule) for key, n in notes.items() if key.startswith("section:") for rule in n["rules"]]
    answer = "\n".join(f"RULE {heading} :: {rule}" for heading, rule in rules)
    return Reply(text=answer or "No rule in this file applies.")


def _next_section(notes: dict[str, Any], file_id: str) -> ScriptedCall | None:
    toc = notes.get(f"toc:{file_id}")
    if f"unreadable:{file_id}" in notes:
        return None
    if toc is None:
        return ScriptedCall("file_regex", {"id": file_id, "pattern": r"^## ", "max_matches": 200})
    subject_words = set(next((n["words"] for k, n in notes.items() if k.startswith("doc:")), []))
    starts = [line for line, _ in toc["sections"]] + [toc["total"] + 1]
    for (line, heading), end in zip(toc["sections"], starts[1:], strict=False):
        words = {_stem(w) for w in re.findall(r"[a-z]{5,}", heading.lower())} - STOP
        relevant = words & {_stem(w) for w in subject_words} or "design review" in heading.lower()
        if relevant and f"section:{file_id}:{line}" not in notes:
            return ScriptedCall("file_read", {"id": file_id, "start_line": line, "end_line": end - 1})
    return None


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


# Answers ----------------------------------------------------------------------------------------------------


def _summary(request: ScriptedRequest) -> Reply:
    """Keeps the person's request word for word (as a careful summarizer does) and where the work stands: its
    notes consolidated (memory.py), not repeated, so the summary does not grow with the run."""
    transcript = text_of(request.messages[-1])
    asked = person_request(transcript)[:1500]
    found = terms(asked)
    notes = "\n".join(memory.consolidated(transcript, lambda line: score(line, found)))
    return Reply(
        text=f"## Requests and intent\n{ASKED}{asked}\n"
        f"## Current work\nReading what the request needs; notes so far:\n{notes}"
    )


def _review(notes: dict[str, Any], files: list[tuple[str, str, int]]) -> str:
    docs = [notes[f"doc:{fid}"] for fid, _, size in files if size < BIG_FILE and f"doc:{fid}" in notes]
    unread = [f"• {n['name']}: {n['why']}" for key, n in notes.items() if key.startswith("unreadable:")]
    tables = [note for key, note in notes.items() if key.startswith("data:")]
    if not docs and tables:
        return tables_answer(tables)
    if not docs:
        return "\n".join(
            ["(demo model) I could not read any of the documents:", *unread]
            if unread
            else ["(demo model) I could not read any of the documents."]
        )
    subject, *references = sorted(docs, key=lambda doc: bool(doc.get("log")))  # a document before a log
    missing = _missing_sections(subject, references)
    rules = _unaddressed_rules(notes, set(subject["words"]))
    points = len(missing) + len(subject["open"]) + len(subject["questions"]) + len(rules)
    verdict = "Not ready for approval" if missing or subject["open"] or rules else "Close to ready"
    out = [f"*Review of {subject['name']}*: {verdict} — {points} point(s) to address."]
    if references:
        out.append("Compared with: " + ", ".join(r["name"] for r in references) + ".")
    out += _ticket_lines(notes)
    if missing:
        out.append("\n*Sections the approved designs have and this one lacks:*")
        out += [f"• {title} (in {', '.join(where)})" for title, where in missing]
    if rules:
        out.append("\n*Handbook rules the design does not address:*")
        out += [f"• §{heading}: {rule}" for heading, rule in rules]
    if subject["open"]:
        out.append("\n*Decisions left open:*")
        out += [f"• line {n}: {text}" for n, text in subject["open"]]
    if subject["questions"]:
        out.append("\n*Open questions to settle before review:*")
        out += [f"• line {n}: {text}" for n, text in subject["questions"]]
    if unread:
        out += ["\n*Files I could not read (not reviewed):*", *unread]
    return "\n".join(out)


def _ticket_lines(notes: dict[str, Any]) -> list[str]:
    errors = notes.get("ticket-errors", {}).get("lines", [])
    if not errors:
        return []
    first_line, first = errors[0]
    dropped = sum("dropped=true" in text for _, text in errors)
    lines = [
        f"\n*From the ticket's pasted log:* {len(errors)} error line(s), {dropped} delivery(ies) dropped without retry "
        f"(first at log line {first_line}: `{first.split(' ', 2)[-1][:110]}`): the loss the design must prevent."
    ]
    stats = notes.get("ticket-stats")
    if stats:
        lines.append(
            f"Computed in the Python sandbox: {stats['deliveries']} deliveries, {stats['errors']} errors "
            f"({stats['error_rate_pct']}%), latency p50 {stats['p50_ms']} ms, p95 {stats['p95_ms']} ms."
        )
    return lines


def _missing_sections(subject: dict[str, Any], references: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    have = [title.lower() for _, title in subject["headings"]]
    missing: dict[str, list[str]] = {}
    for ref in references:
        for _, title in ref["headings"]:
            if not _covered(title.lower(), have):
                missing.setdefault(title, []).append(ref["name"])
    return list(missing.items())


def _covered(title: str, have: list[str]) -> bool:
    words = set(re.findall(r"[a-z][a-z-]*", title)) - {"and", "the", "of", "plan"}
    return any(
        difflib.SequenceMatcher(None, title, other).ratio() > 0.75
        or (words and words & set(re.findall(r"[a-z][a-z-]*", other)))
        for other in have
    )


def _unaddressed_rules(notes: dict[str, Any], words: set[str]) -> list[tuple[str, str]]:
    found = []
    rules = [(n["heading"], r) for k, n in notes.items() if k.startswith("section:") for r in n["rules"]]
    rules += [(h, r) for k, n in notes.items() if k.startswith("summary:") for h, r in n["rules"]]
    for heading, rule in rules:
        terms = set(re.findall(r"[a-z]{6,}", rule.lower())) - STOP
        if terms and len(terms & words) < len(terms) / 2:
            found.append((heading, rule))
    return found[:8]
