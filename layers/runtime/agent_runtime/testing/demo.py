"""The embedded demo model: a scripted assistant that really reads the run's files and reviews them.

It behaves like a careful model on the document-feedback workflow: it reads every listed file with
``file_read`` (following continuation markers), then compares the first document with the others. Its answer
is computed from what the tools returned, so it changes with the documents; nothing is canned.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from .steps import Reply, ScriptedCall, ScriptedRequest, Step

_FILE_ROW = re.compile(r"^- (file-[0-9a-f]+): (.+?) \(", re.MULTILINE)
_READ_HEADER = re.compile(r"^\[(.+) \((file-[0-9a-f]+)\) lines (\d+)-(\d+) of (\d+)\]")
_CONTINUE = re.compile(r"\[continue with start_line=(\d+)\]\s*$")
_OPEN_MARK = re.compile(r"\b(TODO|TBD|FIXME|XXX)\b")
MAX_DEMO_STEPS = 12


@dataclass
class _Doc:
    name: str
    lines: dict[int, str] = field(default_factory=dict)
    total: int = 0
    next_line: int | None = 1

    def headings(self) -> list[tuple[int, str]]:
        return [(n, t.lstrip("#").strip()) for n, t in sorted(self.lines.items()) if t.startswith("## ")]


def demo_script() -> list[Step]:
    """Enough responder steps for any demo run; unused ones are fine here (the demo does not assert)."""
    return [respond] * MAX_DEMO_STEPS


def respond(request: ScriptedRequest) -> Reply:
    files = _FILE_ROW.findall(request.system_text())
    if not files:
        return Reply(text="(demo model) No files are attached to this run, so there is nothing to review.")
    if "file_read" not in request.tool_names:
        return Reply(text="(demo model) This workflow offers no file_read tool, so I cannot read the files.")
    docs = _documents(request, files)
    unread = [(fid, d.next_line) for fid, d in docs.items() if d.next_line is not None]
    if unread:
        return Reply(calls=tuple(ScriptedCall("file_read", {"id": fid, "start_line": line}) for fid, line in unread))
    return Reply(text=_review(list(docs.values())))


def _documents(request: ScriptedRequest, files: list[tuple[str, str]]) -> dict[str, _Doc]:
    docs = {fid: _Doc(name) for fid, name in files}
    for message in request.messages:
        if message["role"] != "tool" or not isinstance(message.get("content"), str):
            continue
        text = message["content"]
        header = _READ_HEADER.match(text)
        if not header or header.group(2) not in docs:
            continue
        doc = docs[header.group(2)]
        doc.total = int(header.group(5))
        for row in text.splitlines()[1:]:
            number, _, line = row.partition("\t")
            if number.strip().isdigit():
                doc.lines[int(number)] = line
        more = _CONTINUE.search(text)
        doc.next_line = int(more.group(1)) if more else None
    return docs


def _review(docs: list[_Doc]) -> str:
    subject, references = docs[0], docs[1:]
    missing = _missing_sections(subject, references)
    open_items = [(n, t.strip()) for n, t in sorted(subject.lines.items()) if _OPEN_MARK.search(t)]
    questions = _open_questions(subject)
    points = len(missing) + len(open_items) + len(questions)
    verdict = "Not ready for approval" if missing or open_items else "Close to ready"
    out = [f"*Review of {subject.name}*: {verdict} — {points} point(s) to address."]
    if references:
        names = ", ".join(r.name for r in references)
        out.append(f"Compared with: {names}.")
    if missing:
        out.append("\n*Sections the existing designs have and this one lacks:*")
        out += [f"• {title} (in {', '.join(where)})" for title, where in missing]
    if open_items:
        out.append("\n*Decisions left open:*")
        out += [f"• line {n}: {text}" for n, text in open_items]
    if questions:
        out.append("\n*Open questions to settle before review:*")
        out += [f"• line {n}: {text}" for n, text in questions]
    out.append(f"\n(Read {sum(len(d.lines) for d in docs)} lines across {len(docs)} document(s).)")
    return "\n".join(out)


def _missing_sections(subject: _Doc, references: list[_Doc]) -> list[tuple[str, list[str]]]:
    have = [title.lower() for _, title in subject.headings()]
    missing: dict[str, list[str]] = {}
    for ref in references:
        for _, title in ref.headings():
            if not _covered(title.lower(), have):
                missing.setdefault(title, []).append(ref.name)
    return list(missing.items())


def _covered(title: str, have: list[str]) -> bool:
    words = set(re.findall(r"[a-z][a-z-]*", title)) - {"and", "the", "of", "plan"}
    for other in have:
        if difflib.SequenceMatcher(None, title, other).ratio() > 0.75:
            return True
        if words and words & set(re.findall(r"[a-z][a-z-]*", other)):
            return True
    return False


def _open_questions(doc: _Doc) -> list[tuple[int, str]]:
    inside, found = False, []
    for number, line in sorted(doc.lines.items()):
        if line.startswith("#"):
            inside = "question" in line.lower()
        elif inside and line.strip().startswith(("-", "*")) and line.rstrip().endswith("?"):
            found.append((number, line.strip().lstrip("-* ")))
    return found
