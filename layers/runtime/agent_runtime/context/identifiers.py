"""Deterministic extraction of what a summary must not lose: ids, paths, URLs, numbers, emails, ticket keys,
quoted user constraints and open tasks. Verified compaction checks each one against the summary."""

from __future__ import annotations

import re
from collections.abc import Iterable

from ..messages import Message, text_of
from .history import FOLD_MARK, SUMMARY_MARK, VIRTUAL_MARK

_PATTERNS = {
    "url": re.compile(r"https?://[^\s)\]>\"'`]+"),
    "email": re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+\b"),
    "ticket": re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d+\b"),
    "path": re.compile(
        r"(?<![\w/])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b|\b[\w-]+\.(?:py|md|pdf|docx|json|ya?ml|csv|txt|ts|js)\b"
    ),
    "id": re.compile(
        r"\b(?:file|run|call|chatcmpl)-[0-9a-zA-Z_]{6,}\b|\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"
    ),
    "date": re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"),
    "version": re.compile(r"\bv?\d+\.\d+\.\d+(?:[-+][\w.]+)?\b"),
    "number": re.compile(
        r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w.])|(?<![\w.])\d+\.\d+(?![\w.])|(?<![\w.-])\d{4,}(?![\w.-])"
    ),
}
_QUOTED = re.compile(r"[\"“]([^\"”\n]{3,200})[\"”]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")  # a dot inside an e-mail address or a version is no end
_NAMED = "[named in it: "
_RULE_WORD = re.compile(r"\b(?:must|never|always|do not|don't|only|required?)\b", re.IGNORECASE)
_TASK = re.compile(r"^\s*(?:[-*]\s*\[ \]|TODO:?|\d+\.\s+TODO)\s*(.+)$", re.MULTILINE)
MAX_ITEM_CHARS = 200


def extract(messages: Iterable[Message]) -> list[str]:
    """Identifiers named by the user or the assistant (text and tool-call arguments), and the user's quoted
    or imperative constraints. Ids that only ever appeared inside tool output are left to the archive: a tool
    result can hold thousands, and the ones that mattered were named when they were used.

    Earlier summaries are skipped: their facts are carried by the engine's fact ledger.
    """
    found: dict[str, None] = {}
    for message in messages:
        text = text_of(message)
        if message["role"] not in ("user", "assistant") or text.startswith(SUMMARY_MARK):
            continue
        said = _said_in_fold(text) if text.startswith(FOLD_MARK) else _without_stand_in(text)
        sources = [said, *(c["function"]["arguments"] for c in message.get("tool_calls", []))]
        for source in sources:
            for item in _scan(source):
                found.setdefault(item, None)
        if message["role"] == "user":
            for item in _constraints(said):
                found.setdefault(item, None)
    return list(found)


def _without_stand_in(text: str) -> str:
    """An offloaded message's stand-in without the engine's own lines (its header, how to read on): what is
    left is the preview and the identifiers it names, which are the message's."""
    if not text.startswith(VIRTUAL_MARK):
        return text
    lines = text.split("\n")
    return "\n".join(
        line[len(_NAMED) : -1] if line.startswith(_NAMED) else line
        for line in lines
        if line.startswith(_NAMED) or not (line.startswith("[") and line.endswith("]"))
    )


_RANKS = {"url": 0, "email": 0, "ticket": 0, "path": 0, "id": 1}


def fact_rank(item: str) -> int:
    """Which facts a pinned list keeps first when it must be cut: the user's words and keys (rank 0), the
    engine's and tools' ids (1), then dates, versions and numbers (2)."""
    if " " in item:
        return 0  # a constraint or an open task, in the user's words
    for kind, pattern in _PATTERNS.items():
        if pattern.fullmatch(item):
            return _RANKS.get(kind, 2)
    return 0


def _said_in_fold(text: str) -> str:
    """A fold's rows without their results (after " → "; small ones go on in indented lines): what the
    assistant wrote and called, as before the fold."""
    lines = text.split("\n")[1:]
    return "\n".join(line.split(" → ", 1)[0] for line in lines if not line.startswith("    "))


NAMING_KINDS = ("url", "email", "ticket", "path", "id")  # what a stand-in names; dates and numbers are noise there


def identifiers_in(text: str, kinds: Iterable[str] = NAMING_KINDS) -> list[str]:
    """The identifiers of ``kinds`` in ``text``, by kind, once each (no constraints or tasks)."""
    wanted = set(kinds)
    items = [m.group(0).rstrip(".,;:") for kind, p in _PATTERNS.items() if kind in wanted for m in p.finditer(text)]
    return list(dict.fromkeys(i for i in items if 2 < len(i) <= MAX_ITEM_CHARS))


def _scan(text: str) -> list[str]:
    items: list[str] = []
    for pattern in _PATTERNS.values():
        items.extend(m.group(0).rstrip(".,;:") for m in pattern.finditer(text))
    items.extend(m.group(1).strip() for m in _TASK.finditer(text))
    return [i for i in items if 2 < len(i) <= MAX_ITEM_CHARS]


def _constraints(text: str) -> list[str]:
    quoted = [m.group(1).strip() for m in _QUOTED.finditer(text)]
    rules = [part.strip() for part in _SENTENCE_END.split(text) if _RULE_WORD.search(part) and len(part.strip()) > 10]
    return [q for q in quoted + rules if len(q) <= MAX_ITEM_CHARS]


def missing_from(summary: str, identifiers: Iterable[str]) -> list[str]:
    """Identifiers that do not appear verbatim (case-insensitively for prose) in the summary."""
    lowered = summary.lower()
    return [item for item in identifiers if item not in summary and item.lower() not in lowered]
