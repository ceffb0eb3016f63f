"""The demo model acting on a request, as a sensible model does: a tool the request names by its name (the
workflow's prompt, or the person's words) is called in the order the request names the tools, with the values the
request names ("in project PROJ") and, for its text parameters (a summary, a description), the person's own words
(a one-line summary, the report quoted); never a value nothing names. When the prompt asks to look for duplicates
and a search found one, nothing is made. Its answer says what the call did: its result; that it failed, and its
error; or why it did not run.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..context.history import VIRTUAL_MARK
from .words import IDENT, named, terms

LINE = {"summary", "title", "subject", "headline"}  # one line of the person's words
BODY = {"description", "body", "details", "comment", "content"}  # the person's words, quoted
FOUND = re.compile(r"^\W*([A-Z][A-Z0-9]+-\d+):? (.*)$", re.MULTILINE)  # a search's hit: KEY-1: its summary
MISSING = (("steps to reproduce", ("steps", "reproduce")), ("versions", ("version",)), ("logs", ("log", "trace")))
# A query the prompt gives its search tool: quoted after the tool's name, in the same sentence, behind "like",
# "e.g.", "such as", "query" or the parameter's own name ('jira_search; JQL like "project = PROJ"')
GIVEN = (
    r"\b{tool}\b[^.]{{0,80}}?\b(?:like|e\.g\.|such as|query|{param})\b"
    r'[^"\u201c.]{{0,40}}["\u201c]([^"\u201d\n]+)["\u201d]'
)


@dataclass(frozen=True)
class Asked:
    """A request as the demo reads it: the workflow's prompt, the person's words, and the tools named by name."""

    prompt: str
    report: str
    named: tuple[str, ...]

    @classmethod
    def of(cls, system: str, report: str, tools: Iterable[str]) -> Asked:
        prompt = system.split("\n\nWorkflow: ", 1)[0].split("\n\n## ", 1)[0]
        said = f"{prompt}\n{report}"
        places = {name: found.start() for name in tools if (found := re.search(rf"\b{re.escape(name)}\b", said))}
        return cls(prompt, report.strip(), tuple(sorted(places, key=places.__getitem__)))

    def order(self, tools: list[str]) -> list[str]:
        """The tools named first, in the order the request names them; the others after, as offered."""
        return [*(t for t in self.named if t in tools), *(t for t in tools if t not in self.named)]

    def value(self, tool: str, name: str, prop: dict[str, Any], results: list[str]) -> Any:
        """The value the request gives ``tool``'s parameter ``name``; None: it names none."""
        if tool in self.named and name.lower() in LINE | BODY:
            if not self.report or self.duplicate(results):
                return None
            return _line(self.report) if name.lower() in LINE else _quoted(self.report)
        found = named(name, prop, self.report)
        if found is None and tool in self.named:
            found = named(name, prop, self.prompt)
        return found

    def given(self, tool: str, param: str) -> str | None:
        """The query the prompt gives a search tool it names; None: it gives none."""
        found = re.search(GIVEN.format(tool=re.escape(tool), param=re.escape(param)), self.prompt, re.IGNORECASE)
        return found.group(1).strip() if found and tool in self.named else None

    def query(self, tool: str, param: str) -> str | None:
        """What a search asks: the query the prompt gives the tool, else the person's words; None: neither."""
        if (given := self.given(tool, param)) is not None:
            return given
        own = terms(self.report)
        if not own:
            return None
        return " ".join(own[:4]) if param.lower() != "jql" else f'text ~ "{" ".join(own[:3])}"'

    def makes(self, spec: dict[str, Any]) -> bool:
        """A named tool given the person's words: what it makes is the request's outcome."""
        props = spec.get("parameters", {}).get("properties", {})
        return spec.get("name") in self.named and any(p.lower() in LINE | BODY for p in props)

    def duplicate(self, results: list[str]) -> str | None:
        """A hit of an earlier search sharing two words or more with the report, when the prompt asks for them."""
        if "duplicate" not in self.prompt.lower():
            return None
        mine = {t for t in terms(self.report) if not IDENT.fullmatch(t)}
        for text in results:
            for key, summary in FOUND.findall(text):
                shared = sorted(mine & {t for t in terms(summary) if not IDENT.fullmatch(t)})
                if len(shared) >= 2:
                    return f"{key} ({summary.strip()[:120]})"
        return None


# An error before the tool was called (refused, denied, its arguments not taken): the call did not run.
NEVER_CALLED = re.compile(
    r"^(?:not run:|there is no tool named|invalid arguments|the arguments (?:are|must))|\(it was not run\)"
)
RAISED = re.compile(r"^tool '[^']*' failed: ")  # the runtime's line for a tool that raised


def outcome(tool: str, result: str) -> str:
    """What a call that acted did, in a line people read: its result; that it failed, with the error's one line;
    or, when it was denied or never called, why it did not run. A result kept as a file is told from its first
    lines, never by the engine's header for it."""
    if result.startswith(VIRTUAL_MARK):
        return f"Done: {kept(result)}"
    said = result.strip().splitlines()[0] if result.strip() else "(no result)"
    if not said.startswith("ERROR"):
        return f"Done: {said}"
    why = said.removeprefix("ERROR:").strip()
    if NEVER_CALLED.search(why):
        why = why.removeprefix("not run:").strip()
        return f"{tool} did not run: {why.split('. Do not retry', 1)[0].rstrip('.')}."
    if why.startswith("the outcome of this"):  # started before an interruption: neither done nor failed
        return f"{tool}: {why.split('. It was not run again', 1)[0].rstrip('.')}."
    return f"{tool} failed: {RAISED.sub('', why).rstrip('.')}."


def kept(result: str) -> str:
    """A result the engine kept as a file, as people read it: its first line shown, and how long it is."""
    header, *rest = result.splitlines()
    lines = re.search(r", ([\d,]+) lines, ", header)
    length = f"{lines.group(1)} lines" if lines else "long"
    first = next((line.strip() for line in rest[:-1] if line.strip()), None)  # the last line is the pointer
    if first is None:
        return f"its output is too long to show here ({length})."
    return f"{first[:300]} (the first of {length}: the output is too long to show whole)"


def _line(report: str) -> str:
    first = re.split(r"(?<=[.!?])\s|\n|:\s", report.strip(), maxsplit=1)[0].strip().rstrip(".:")
    return first if len(first) <= 120 else first[:117].rsplit(" ", 1)[0] + "…"


def _quoted(report: str) -> str:
    lowered = report.lower()
    missing = [what for what, words in MISSING if not any(w in lowered for w in words)]
    quote = "\n".join(f"> {line}" for line in report.splitlines())
    return f"Reported:\n{quote}\n\nMissing: {', '.join(missing) or 'nothing obvious'}."
