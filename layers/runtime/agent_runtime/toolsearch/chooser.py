"""The chooser: a model call in a window of its own that reads the request and picks the tools that fit.

The lexical stage finds the tools whose words a request shares; people write "who changed the retry code last
week?", not "list_commits". The chooser sees the request (the search's words and the user's last message), the
lexical stage's candidates with their descriptions, and every other deferred tool by name, grouped by toolset (a
catalogue of 300 names is ~2,000 tokens): it may pick any of them, and nothing else — its answer is read for names
of the catalogue only. Its call is the run's like a compaction summary's: recorded, priced in the run's ledger
(source ``search``), bounded by its own output cap, skipped when the spend limit leaves no room for it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .. import messages as msgs
from ..models import Model, ModelError, ModelRequest
from ..spend import request_cap
from ..steps import Run
from .index import Entry

MAX_REPLY_TOKENS = 200
DESCRIPTION_CHARS = 300  # of a candidate's description
CONTEXT_CHARS = 1_500  # of the user's last message
SYSTEM = (
    "You pick tools for an assistant. You get what it needs, the user's last message, candidate tools with "
    "their descriptions, and the names of every other tool it may use. Answer with the names of the tools that "
    "fit the need, best first, one per line, at most {results}; nothing else. Answer 'none' if no tool fits."
)


@dataclass(frozen=True, slots=True)
class Choice:
    names: list[str]  # best first, all from the catalogue
    stage: str  # "chooser", or "lexical" with why the chooser did not answer
    tokens: int = 0  # the chooser call's prompt and reply


class Chooser:
    def __init__(self, model: Model, results: int) -> None:
        self.model, self.results = model, results

    def choose(self, run: Run, need: str, candidates: Sequence[Entry], catalogue: Sequence[Entry]) -> Choice:
        request = ModelRequest(
            messages=[msgs.system(SYSTEM.format(results=self.results)), msgs.user(self.prompt(run, need, candidates,
                                                                                             catalogue))],
            max_output_tokens=MAX_REPLY_TOKENS,
            timeout=None if run.deadline.at is None else max(run.deadline.remaining(), 0.001),
        )  # fmt: skip
        allowed = request_cap(run.record, request.messages, MAX_REPLY_TOKENS)
        if isinstance(allowed, str):
            return Choice([], f"lexical (the chooser was not asked: {allowed})")
        try:
            response = self.model.complete(request)
        except ModelError as error:
            return Choice([], f"lexical (the chooser failed: {type(error).__name__})")
        entry = {"turn": run.state.turn, "purpose": "tool_search", **response.to_record()}
        run.record.add_call(entry, source="search")
        usage = entry.get("usage") or {}
        names = picked(response.text or "", [item.name for item in catalogue])[: self.results]
        return Choice(names, "chooser", int(usage.get("total_tokens") or 0))

    @staticmethod
    def prompt(run: Run, need: str, candidates: Sequence[Entry], catalogue: Sequence[Entry]) -> str:
        last = next((msgs.text_of(m) for m in reversed(run.state.messages) if m["role"] == "user"), "")
        rows = [f"- {c.name}: {_clip(c.description)}" + (f" [{', '.join(c.parameters)}]" if c.parameters else "")
                for c in candidates]  # fmt: skip
        shown = {c.name for c in candidates}
        groups: dict[str, list[str]] = {}
        for item in catalogue:
            if item.name not in shown:
                groups.setdefault(item.group or item.kind, []).append(item.name)
        others = "\n".join(f"- {group}: {', '.join(names)}" for group, names in groups.items())
        return (
            f"Need: {need.strip()}\n\nThe user's last message: {_clip(last, CONTEXT_CHARS)}\n\n"
            f"Candidates:\n" + "\n".join(rows) + (f"\n\nOther tools, by toolset:\n{others}" if others else "")
        )


def picked(reply: str, names: Sequence[str]) -> list[str]:
    """The catalogue's names in the reply, in the order it gives them; anything else in it is ignored."""
    found: list[tuple[int, str]] = []
    for name in names:
        match = re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", reply)
        if match:
            found.append((match.start(), name))
    return [name for _, name in sorted(found)]


def _clip(text: str, limit: int = DESCRIPTION_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit].rsplit(" ", 1)[0] + " …"
