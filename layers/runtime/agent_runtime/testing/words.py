"""What the person said, as the demo model reads it: their words without what the runtime adds around them (the
files list a later turn announces, a reaction's frame, a kept message's header and pointer), the terms it searches
with, and the values those words give a tool's parameters. Nothing here reads a tool's result.

Only the person's words feed what the demo shows people (a search's terms, a fallback's "terms: …"): the runtime's
additions name virtual files and mime types, which are internal.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from ..messages import files_section

ASKED = "The person asked: "  # how the demo's summaries keep the request (demo.py)
IDENT = re.compile(r"\b(?:[A-Z][A-Z0-9]+-\d+|[A-Z]{3,}(?:_[A-Z]+)*)\b")
STOP = {"about", "after", "again", "also", "answer", "attached", "before", "could", "every", "first", "from", "have",
        "here", "should", "tell", "that", "their", "there", "these", "this", "what", "when", "where", "which",
        "while", "with", "would", "please", "message", "thread", "gave", "give", "said", "says", "line", "file",
        "files", "read", "find", "them", "your", "does", "know", "team", "question",
        "exactly"}  # fmt: skip # a table: words
NOT_VALUES = {"the", "a", "an", "this", "that", "which", "what", "any", "some", "each", "every", "is", "was", "to",
              "of", "for", "and", "or", "my", "our", "your", "its", "their", "restart", "name", "it", "whose", "no",
              "one", "same", "other", "another", "new", "old", "in", "on", "at", "by", "with", "from", "into",
              "one-line"}  # fmt: skip # a table: words
GO_ON = {"continue", "carry", "keep", "going", "resume", "proceed", "ahead", "please", "finish",
         "where", "left", "stopped"}  # fmt: skip # a table: a turn of only these words asks to go on
# The runtime's additions to a person's turn: new attachments announced (loop/agent.py), a reaction's frame
# (sources/slack_reaction.py).
FILES_BLOCK = "\n\n" + files_section(())
REACTED = re.compile(r"^\[<@[\w.-]+> reacted with :[^\s:]+: to this message\]\n?", re.MULTILINE)
_FRAME = re.compile(r"^\s*\[.*\]\s*$")  # a whole line in brackets: a header or a pointer, never prose


_INTERNAL = (
    (re.compile(r"\s*\(file-[0-9a-f]{6,}\)"), ""),  # "name (file-…)": the name says it
    (re.compile(r",?\s*type (?:text|application|image|audio|video|font|multipart)/[\w.+-]+"), ""),
    (re.compile(r"\s*\([^()]*\b(?:file_read|file_regex|peek_file|extract_file|load_file)\b[^()]*\)"), ""),
    (re.compile(r"\b(?:text|application|image|audio|video|font|multipart)/[\w.+-]+"), "its type"),
    (re.compile(r"\bfile-[0-9a-f]{6,}\b"), "the file"),
)


def told(why: str, name: str = "") -> str:
    """A tool's reason, as people are told it: without file ids, mime types and hints to the model's tools, and
    without the file's name when it opens the reason (it is said beside it)."""
    for pattern, instead in _INTERNAL:
        why = pattern.sub(instead, why)
    return why.removeprefix(f"{name} ").strip() if name else why.strip()


def turn_words(text: str) -> str:
    """A person's turn without the files list the runtime announces with it and a reaction's frame."""
    return REACTED.sub("", text.split(FILES_BLOCK, 1)[0]).strip()


def spoken(question: str) -> str:
    """The question without the runtime's bracketed lines (a kept message's header and the pointer that ends its
    preview, a thread's "[the message to answer]"): what terms and phrases are taken from."""
    return "\n".join(line for line in question.splitlines() if not _FRAME.match(line))


def goes_on(text: str) -> bool:
    """A turn that only asks to go on ("go on", "continue please"): it carries no request of its own."""
    words = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", spoken(text))}
    return not IDENT.search(text) and words <= STOP | GO_ON


def own_words(question: str) -> str:
    """What the person wrote: of a message kept as a virtual file, the prose lines its preview opens with (a pasted
    log or table names no value to act on)."""
    if not question.startswith("[virtual file "):
        return question
    lines = question.splitlines()[1:]
    prose = itertools.takewhile(lambda line: re.match(r"[A-Za-z][^=\t]*$", line.strip()) is not None, lines)
    return "\n".join(prose)


def named(name: str, prop: dict[str, Any], words: str) -> str | int | None:
    """The value the words give a parameter: one of its enum values they name, the word before its name ("the
    payments service"), after it with a colon or an equals sign ("service: payments"), or a code after it
    ("project PROJ"); None: none."""
    for value in prop.get("enum", []):
        if re.search(rf"\b{re.escape(str(value))}\b", words, re.IGNORECASE):
            return value  # type: ignore[no-any-return]
    label = re.escape(name.replace("_", " "))
    found = [
        match.group(1)
        for match in (
            re.search(rf"\b([\w.-]+)\s+{label}\b", words, re.IGNORECASE),
            re.search(rf"\b{label}\s*[:=]\s*[\"'`]?([\w.-]+)", words, re.IGNORECASE),
            re.search(rf"(?i:\b{label})\s+([A-Z][A-Z0-9_-]+)\b", words),
        )
        if match and match.group(1).lower() not in NOT_VALUES
    ]
    if not found or prop.get("type", "string") not in ("string", "integer"):
        return None
    if prop.get("type") == "integer":
        return int(found[0]) if found[0].isdigit() else None
    return found[0]


def phrases(question: str) -> str:
    """Adjacent content words of the question as phrases (``liability cap``), as a pattern."""
    words = re.findall(r"[A-Za-z][A-Za-z-]{2,}", question)
    short = {"the", "and", "for", "was", "did", "you", "who", "are", "any", "its", "what", "which", "with"}
    pairs = [f"{a} {b}" for a, b in itertools.pairwise(words) if not {a.lower(), b.lower()} & (STOP | short)]
    return "|".join(re.escape(pair) for pair in dict.fromkeys(pairs))


def terms(text: str) -> list[str]:
    idents = IDENT.findall(text)
    quoted = re.findall(r'"([^"]{3,40})"', text)
    words = [w for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", text) if w.lower() not in STOP]
    return list(dict.fromkeys([*idents, *quoted, *(w.lower() for w in words)]))


def distinctive(found: list[str]) -> list[str]:
    """Identifiers and quoted phrases first (what a person would grep for), then the longer words."""
    strong = [t for t in found if IDENT.fullmatch(t) or " " in t]
    return strong + sorted((t for t in found if t not in strong), key=len, reverse=True)


def score(line: str, found: list[str]) -> int:
    lowered = line.lower()
    return sum((3 if IDENT.fullmatch(t) else 1) for t in found if t.lower() in lowered)


_ASKED = re.compile(re.escape(ASKED) + r"(.*?)\n## Current work", re.DOTALL)
_USER_SECTION = re.compile(r"^## \[\d+\] user\n(.*?)(?=^## \[\d+\] |\Z)", re.MULTILINE | re.DOTALL)


def person_request(text: str) -> str:
    """The request an earlier summary kept, else the first message of the person in a transcript."""
    text = re.sub(r"(?m)^\d+\t", "", text)  # as file_read shows it
    kept = _ASKED.search(text)
    if kept:
        return kept.group(1).strip()
    first = _USER_SECTION.search(text)
    return turn_words(first.group(1).split("\n\n[context status", 1)[0]) if first else ""
