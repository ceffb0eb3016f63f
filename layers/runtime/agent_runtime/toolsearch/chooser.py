"""The chooser: a model call in a window of its own that reads the request and picks the tools that fit.

The lexical stage finds the tools whose words a request shares; people write "who changed the retry code last
week?", not "list_commits". The chooser sees the request (the search's words and the user's last message), the
lexical stage's candidates with their descriptions, and every deferred tool by name, grouped by toolset, in its
system message (a catalogue of 300 names is ~2,000 tokens, the same for every search: cached by the server from
the second on): it may pick any of them, and nothing else — its answer is read for names of the catalogue only.
Its call is the run's like a compaction summary's: recorded, priced in the run's ledger (source ``search``, at the
chooser's model's prices), bounded by its own output cap, skipped when the spend limit leaves no room for it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .. import messages as msgs
from ..context.counter import estimate_usage
from ..models import Model, ModelError, ModelRequest, ModelResponse
from ..models.prices import prices_for
from ..spend import request_cap
from ..spend.ledger import usage_problem
from ..steps import Run
from .index import Entry

MAX_REPLY_TOKENS = 200
DESCRIPTION_CHARS = 300  # of a candidate's description
CONTEXT_CHARS = 1_500  # of the user's last message
SYSTEM = (
    "You pick tools for an assistant. You get what it needs, the user's last message and candidate tools with "
    "their descriptions; below are the names of every tool it may use. Answer with the names of the tools that "
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
            messages=[msgs.system(self.instructions(catalogue)), msgs.user(self.prompt(run, need, candidates))],
            max_output_tokens=MAX_REPLY_TOKENS,
            timeout=None if run.deadline.at is None else max(run.deadline.remaining(), 0.001),
        )
        allowed = request_cap(run.record, request.messages, MAX_REPLY_TOKENS)
        if isinstance(allowed, str):
            return Choice([], f"lexical (the chooser was not asked: {allowed})")
        try:
            response = self.model.complete(request)
        except ModelError as error:
            return Choice([], f"lexical (the chooser failed: {type(error).__name__})")
        usage = charge(run, self.model.name, request, response)
        names = picked(response.text or "", [item.name for item in catalogue])[: self.results]
        return Choice(names, "chooser", int(usage.get("total_tokens") or 0))

    def instructions(self, catalogue: Sequence[Entry]) -> str:
        """The chooser's system message: what it does and every tool's name by toolset — the same for every search
        of the agent, so a server's prompt cache serves it from the second search on."""
        groups: dict[str, list[str]] = {}
        for item in catalogue:
            groups.setdefault(item.group or item.kind, []).append(item.name)
        listing = "\n".join(f"- {group}: {', '.join(names)}" for group, names in groups.items())
        return f"{SYSTEM.format(results=self.results)}\n\nEvery tool, by toolset:\n{listing}"

    @staticmethod
    def prompt(run: Run, need: str, candidates: Sequence[Entry]) -> str:
        last = next((msgs.text_of(m) for m in reversed(run.state.messages) if m["role"] == "user"), "")
        rows = [
            f"- {c.name}: {_clip(c.description)}" + (f" [{', '.join(c.parameters)}]" if c.parameters else "")
            for c in candidates
        ]
        return (
            f"Need: {need.strip()}\n\nThe user's last message: {_clip(last, CONTEXT_CHARS)}\n\n"
            "Candidates (the closest by their words; any tool of the list above may be picked):\n" + "\n".join(rows)
        )


def charge(run: Run, model: str, request: ModelRequest, response: ModelResponse) -> dict[str, int]:
    """The chooser's call in the run's record and ledger (source ``search``), at its own model's prices (the
    workflow's when it is the workflow's model); usage the endpoint did not report is estimated, and said so."""
    entry = {"turn": run.state.turn, "purpose": "tool_search", **response.to_record()}
    entry.pop("usage_invalid", None)
    if usage_problem(entry.get("usage")) is not None:
        estimated = estimate_usage(request.messages, response.text, (), model=model)
        entry |= {"usage": estimated, "usage_estimated": usage_problem(entry.get("usage"))}
    own = run.workflow.model.prices if model == run.workflow.model.name else None
    prices = prices_for(model, own)
    cost = None if prices is None else prices.cost(entry["usage"])
    entry["cost_usd"] = None if cost is None else round(cost, 8)
    run.record.model_calls.append(entry)
    if cost is not None:
        run.record.ledger.charge(cost, source="search", estimated="usage_estimated" in entry)
    return dict(entry["usage"])


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
