"""The demo model writing what a workflow's prompt asks from the search the prompt gives it: a prompt that names a
search tool with its query ('jira_search; JQL like "project = PROJ AND created >= -1d"') is followed as written
(``acting.Asked.given``), and the answer is made of what that search returned, every hit (the prompt chose them,
not the person's words), grouped by whether it is resolved, within the lines the prompt allows ("at most ten
lines"). A search that found nothing is said to have found nothing: there is nothing to report.

A scheduled run's message ("Write today's digest") names nothing to search for: without this, the demo searched
with its words and answered "I could not find an answer".
"""

from __future__ import annotations

import json
import re

from ..messages import text_of
from .acting import FOUND, Asked
from .assistant import _next_call
from .reading import _asked, _question
from .steps import Reply, ScriptedRequest
from .words import spoken, terms

NUMBERS = {"three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "twelve": 12,
           "fifteen": 15, "twenty": 20}  # fmt: skip # a table: number words
LIMIT = re.compile(r"\b(?:at most|no more than|up to)\s+(\d+|[a-z]+)\s+(?:lines|bullets|items|points)\b", re.I)
DONE = {"done", "resolved", "closed", "fixed", "complete", "completed", "merged", "released"}
STATUS = re.compile(r"\s*\[([^\]]+)\]\s*$")
DAY = re.compile(r"\b(?:today|yesterday|daily|tonight|this morning)\b|-1d\b", re.IGNORECASE)
Searched = tuple[str, str, str]  # the tool, the prompt's query, what it returned


def respond(request: ScriptedRequest) -> Reply | None:
    """The answer from the prompt's search once it has run and nothing else is left to call; None: not asked."""
    question = _question(request)
    asked = _asked(request, question)
    searched = _searched(request, asked)
    if not searched or _next_call(request, question, terms(spoken(question))) is not None:
        return None
    return Reply(text=written(asked, searched))


def _searched(request: ScriptedRequest, asked: Asked) -> list[Searched]:
    """The calls made with a query the prompt gives, and their results (as far as the window shows them)."""
    results = {m.get("tool_call_id"): text_of(m) for m in request.messages if m["role"] == "tool"}
    found = []
    for message in request.messages:
        for call in message.get("tool_calls", []):
            name, args = call["function"]["name"], _arguments(call["function"]["arguments"])
            given = next((v for p, v in args.items() if v == asked.given(name, p)), None)
            if given is not None and call["id"] in results:
                found.append((name, str(given), results[call["id"]]))
    return found


def _arguments(raw: str) -> dict[str, object]:
    try:
        value = json.loads(raw or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def written(asked: Asked, searched: list[Searched]) -> str:
    """What the prompt asks written from the searches' results: each hit once, open ones first, then resolved."""
    limit = _limit(asked.prompt)
    hits = list(dict.fromkeys(hit for _, _, result in searched for hit in FOUND.findall(result)))
    where = "; ".join(dict.fromkeys(f"{tool} (`{query}`)" for tool, query, _ in searched))
    if not hits:
        lines = [line for _, _, result in searched for line in _content(result)]
        if lines:
            return "\n".join([f"From {where}:", *(f"• {line}" for line in _capped(lines, limit))])
        today = " today" if DAY.search(f"{asked.prompt}\n{asked.report}") else ""
        return f"Nothing to report{today}: {where} found nothing."
    resolved = [hit for hit in hits if _status(hit[1]).lower() in DONE]
    ordered = [hit for hit in hits if hit not in resolved] + resolved
    shown = _capped([_bullet(key, text) for key, text in ordered], limit)
    out = [f"From {where}: {len(hits)} found."]
    for title, group in (
        ("New or still open", shown[: len(hits) - len(resolved)]),
        ("Resolved", shown[len(hits) - len(resolved) :]),
    ):
        if group:
            out += [f"*{title}:*", *group]
    return "\n".join(out)


def _bullet(key: str, text: str) -> str:
    status = _status(text)
    summary = STATUS.sub("", text).strip()
    return f"{key}: {summary}" + (f" ({status})" if status else "")


def _status(text: str) -> str:
    found = STATUS.search(text)
    return found.group(1).strip() if found else ""


def _content(result: str) -> list[str]:
    """A result's lines that say something: not a tool's bracketed header or pointer, nor "(no … match)"."""
    kept = [line.strip() for line in result.splitlines()]
    return [line for line in kept if line and not re.fullmatch(r"\[.*\]|\(.*\)", line)]


def _limit(prompt: str) -> int:
    found = LIMIT.search(prompt)
    if not found:
        return 10
    word = found.group(1).lower()
    return int(word) if word.isdigit() else NUMBERS.get(word, 10)


def _capped(lines: list[str], limit: int) -> list[str]:
    return lines if len(lines) <= limit else [*lines[: limit - 1], f"… and {len(lines) - limit + 1} more"]
