"""The demo model on a structured delivery the workflow's prompt points at: a JSON file the prompt names by its name
(a webhook's ``delivery.json``) is read, and the answer is made of its fields as the prompt asks: the subject's
title and author quoted, what it changes (its description's first sentences), its size (the counts it carries:
changed files, commits, additions), the paths its words name to look at first and what seems missing (tests, docs
named nowhere in it). A field the delivery lacks is not made up; a delivery that is not JSON is said to be so.

It had been read as a document to review ("Review of delivery.json: Close to ready — 0 point(s)").
"""

from __future__ import annotations

import json
import re
from typing import Any

from .reading import FILE_ROW, _read_results
from .steps import Reply, ScriptedCall, ScriptedRequest

TITLE = ("title", "name", "subject", "summary")
AUTHOR = ("user.login", "author.login", "author.name", "creator.login", "user.name", "sender.login", "login")
BODY = ("body", "description", "text", "message")
NOT_COUNTS = re.compile(r"(?:^|_)(?:id|number|at|size)$")
PATH = re.compile(
    r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]+|\b[\w-]+\.(?:py|js|ts|tsx|go|rs|java|rb|md|ya?ml|json|sql|tf|sh)\b"
)
MISSING = (("tests", ("test", "spec")), ("docs", ("doc", "readme", "changelog")))
Leaf = tuple[str, Any]  # a field's dotted path, and its value


def respond(request: ScriptedRequest, *, may_call: bool = True) -> Reply | None:
    """The next read or the summary; None: the prompt names no JSON file of the run."""
    prompt = request.system_text().split("\n\nWorkflow: ", 1)[0]
    named = [
        (fid, name)
        for fid, name, mimetype, _, _ in FILE_ROW.findall(request.system_text())
        if name in prompt and ("json" in mimetype or name.endswith(".json"))
    ]
    if not named or "file_read" not in request.tool_names:
        return None
    read = _read_results(request)
    unread = [fid for fid, _ in named if fid not in read]
    if unread and may_call:
        return Reply(calls=tuple(ScriptedCall("file_read", {"id": fid}) for fid in unread))
    return Reply(text="\n\n".join(summary(name, read.get(fid, ""), prompt) for fid, name in named))


def summary(name: str, text: str, prompt: str) -> str:
    """What a delivery says, in the parts the prompt asks for."""
    leaves = _leaves(text)
    if not leaves:
        return f"I could not read {name} as JSON, so I cannot say what it is about."
    subject = _subject(leaves)
    fields = dict(reversed(leaves))  # a path's first value
    title, author = _first(fields, subject, TITLE), _first(fields, subject, AUTHOR)
    body = str(_first(fields, subject, BODY) or "").strip()
    what = subject.rstrip(".").replace("_", " ") or "delivery"
    out = [_headline(what, title, author, _counts(leaves, subject))]
    sentences = re.split(r"(?<=[.!?])\s+", " ".join(body.split()))
    out.append(f"The change: {' '.join(sentences[:2])[:400]}" if body else f"The {what} has no description.")
    said = f"{title or ''}\n{body}"
    paths = list(dict.fromkeys(PATH.findall(said)))
    if re.search(r"\b(?:first|look at|areas?)\b", prompt, re.IGNORECASE):
        out.append(f"Look at first: {', '.join(paths[:5])}" if paths else f"The {what} names no file to start from.")
    if "missing" in prompt.lower():
        lowered = said.lower()
        absent = [kind for kind, words in MISSING if not any(word in lowered for word in words)]
        out.append(
            f"Seems missing: {', '.join(absent)} (named nowhere in it)." if absent else "Nothing obvious missing."
        )
    return "\n".join(out)


def _headline(what: str, title: Any, author: Any, counts: list[str]) -> str:
    head = f"The {what} “{title}”" if title else f"The {what} (no title)"
    head += f" by {author}" if author else ""
    return head + (f": {', '.join(counts)}." if counts else ".")


def _leaves(text: str) -> list[Leaf]:
    """Every scalar field, in the document's order; a cut or broken JSON gives the string and number fields its
    text shows."""
    try:
        return list(_flatten("", json.loads(text)))
    except ValueError:
        pairs = re.findall(r'"(\w+)":\s*("(?:[^"\\]|\\.)*"|-?\d+)', text)
        return [(key, json.loads(value)) for key, value in pairs]


def _flatten(prefix: str, value: Any) -> list[Leaf]:
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in _flatten(f"{prefix}{key}.", item)]
    if isinstance(value, list):
        return []
    return [(prefix.rstrip("."), value)]


def _subject(leaves: list[Leaf]) -> str:
    """The top-level object the delivery is about (``pull_request.``): the one with the most fields; "" for none."""
    tops = [path.split(".", 1)[0] for path, _ in leaves if "." in path]
    return max(dict.fromkeys(tops), key=tops.count) + "." if tops else ""


def _first(fields: dict[str, Any], subject: str, names: tuple[str, ...]) -> Any:
    """The subject's own field of one of these names (its ``title``, its ``user.login``), else the delivery's."""
    for path in [*(subject + name for name in names), *names]:
        if isinstance(fields.get(path), str) and fields[path].strip():
            return fields[path]
    return None


def _counts(leaves: list[Leaf], subject: str) -> list[str]:
    """The subject's own counts (changed files, commits, additions), not its ids, numbers or zeros."""
    found = []
    for path, value in leaves:
        key = path.removeprefix(subject)
        if path.startswith(subject) and "." not in key and type(value) is int and value and not NOT_COUNTS.search(key):
            found.append(f"{value:,} {key.replace('_', ' ')}")
    return found[:6]
