"""Summarising: the oldest part of the history becomes one structured message — the model's summary (a custom
summarizer's, or a deterministic one when either fails or none is set), the identifiers it must not lose pinned
from the archive, the results of pinned tools (skills) carried verbatim, and an index of what left the window by
archive line. A retried invocation reuses a summary already paid for (the memo); each summary call is charged to
the run's ledger.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .. import messages as msgs
from ..errors import ConfigError
from ..events import CompactionFallback, CompactionReused
from ..messages import Message, text_of
from ..models import Model, ModelError, ModelRequest, ModelResponse
from ..state import Slot
from .counter import TokenCounter
from .history import SUMMARY_MARK
from .identifiers import extract, fact_rank, missing_from
from .prompts import SUMMARY_SYSTEM, deterministic_summary, summary_request
from .transcript import Brief, Transcript, render

if TYPE_CHECKING:
    from ..steps import Run

logger = logging.getLogger(__name__)
# The identifiers every compaction so far has seen (pinned when a later summary leaves them out).
FACTS: Slot[list[str]] = Slot("facts", list, owner=__name__)
MAX_FACTS = 1_000
CLIP_TOKENS = 1_500  # per message, in the summary call's input (the archive keeps everything)
MAX_PINNED = 150
MAX_INDEX_ROWS = 60
MIN_ROWS = 8
TOKENS_PER_ROW = 100  # index rows allowed per token of the compaction's target: ~25 tokens a row, a quarter of it
STILL_IN_FORCE = "## Still in force (kept verbatim through compaction)"
INDEX_HEADING = "## Archive index (what left the window, by archive line)"

CustomSummarizer = Callable[[list[Message], str], str]


class SummaryMemo(Protocol):
    """Remembers summaries by (run, span), so a retried invocation never summarizes or bills twice."""

    def get(self, run_id: str, key: str) -> dict[str, Any] | None: ...

    def put(self, run_id: str, key: str, value: dict[str, Any]) -> None: ...


def load_custom(spec: str | None, base_dir: Path | None) -> tuple[CustomSummarizer | None, str | None]:
    """``module:function`` gives a summarizer callable; a file path gives extra prompt instructions."""
    if not spec:
        return None, None
    if ":" in spec and not spec.endswith((".md", ".txt")):
        module_name, _, attr = spec.partition(":")
        try:
            return getattr(importlib.import_module(module_name), attr), None
        except (ImportError, AttributeError) as error:
            raise ConfigError(f"context.compactor {spec!r}: {error}") from None
    path = (base_dir or Path.cwd()) / spec
    try:
        return None, path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"context.compactor: cannot read {path}: {error.strerror or error}") from None


class Summarizer:
    """Writes the summary message of a span of the history."""

    def __init__(
        self,
        counter: TokenCounter,
        *,
        mutating: set[str],
        pinned: set[str],
        model: Model | None = None,
        max_summary_tokens: int = 4096,
        custom: CustomSummarizer | None = None,
        instructions: str | None = None,
        memo: SummaryMemo | None = None,
    ) -> None:
        self.counter, self.mutating, self.pinned = counter, mutating, pinned
        self.model, self.max_summary_tokens = model, max_summary_tokens
        self.custom, self.instructions, self.memo = custom, instructions, memo
        # By tool name: a result the summary call reads in brief, as the window carries it after the compaction
        # in another form (a search's found schemas join the tool list: the summary needs their names only).
        self.briefs: dict[str, Brief] = {}

    def _remembered(
        self, run: Run, span: list[Message], make: Callable[[], tuple[str, str, dict[str, Any] | None]]
    ) -> tuple[str, str, dict[str, Any] | None]:
        if self.memo is None:
            return make()
        key = hashlib.sha256(json.dumps(span, sort_keys=True).encode()).hexdigest()[:32]
        found = self.memo.get(run.state.run_id, key)
        if found is not None:
            run.record.event(CompactionReused(key=key))  # a retry: no second summary call, no second bill
            return found["body"], found["tactic"], None
        body, tactic, usage = make()
        self.memo.put(run.state.run_id, key, {"body": body, "tactic": tactic})
        return body, tactic, usage

    def summarize(
        self,
        run: Run,
        messages: list[Message],
        archive: Transcript,
        archive_id: str,
        number: int,
        bounds: tuple[int, int],
        target: int,
        summary_input: int | None,
    ) -> tuple[list[Message], dict[str, Any]]:
        lead, cut = bounds
        span = messages[lead:cut]
        body, tactic, usage = self._remembered(
            run, span, lambda: self._summary_text(run, span, archive, archive_id, lead, summary_input)
        )
        facts = remember_facts(run, span)
        missing = missing_from(body, facts)
        rows = max(MIN_ROWS, min(MAX_INDEX_ROWS, target // TOKENS_PER_ROW))  # a small window, a short list
        pinned = _pinned(missing, archive, limit=max(MIN_ROWS, min(MAX_PINNED, 3 * rows)))
        span_tokens = sum(self.counter.message(m) for m in span)
        header = (
            f"{SUMMARY_MARK} #{number} · replaces messages {lead}-{cut - 1} ({span_tokens:,} tokens) · full text in "
            f"archive {archive_id} ({archive.spans[-1][1]:,} lines), readable with file_read and file_regex]"
        )
        index = self._manifest(span, archive.spans[lead:cut], rows)
        verbatim = self._pinned_results(span)
        parts = (header, body.strip(), pinned, verbatim, index)
        summary = msgs.user("\n\n".join(part for part in parts if part))
        details = {
            "tactic": tactic,
            "summary_tokens": self.counter.message(summary),
            "identifiers_checked": len(facts),
            "identifiers_added": len(missing),
            "summary_usage": usage,
        }
        return [*messages[:lead], summary, *messages[cut:]], details

    def _pinned_results(self, span: list[Message]) -> str:
        """Results of pinned tools (loaded skills) leave the span but not the context: carried verbatim, also
        out of earlier summaries, so chained compactions keep them."""
        names = msgs.tool_names(span)
        kept: list[str] = []
        for message in span:
            text = text_of(message)
            if text.startswith(SUMMARY_MARK) and STILL_IN_FORCE in text:
                kept.append(text.split(STILL_IN_FORCE, 1)[1].split(INDEX_HEADING, 1)[0].strip())
            elif message["role"] == "tool" and names.get(message.get("tool_call_id", "")) in self.pinned:
                kept.extend([] if text.startswith("ERROR") else [text])
        return f"{STILL_IN_FORCE}\n" + "\n\n".join(kept) if kept else ""

    def _manifest(self, span: list[Message], spans: list[tuple[int, int]], limit: int = MAX_INDEX_ROWS) -> str:
        """The loss manifest: every dropped message and where the archive has it. Actions are always listed."""
        calls = {c["id"]: c["function"] for m in span for c in m.get("tool_calls", [])}
        rows: list[tuple[bool, str]] = []
        for message, (first, last) in zip(span, spans, strict=True):
            function = calls.get(message.get("tool_call_id", ""), {"name": "?", "arguments": ""})
            if message["role"] == "tool":
                action = function["name"] in self.mutating
                flag = " — an ACTION already taken: do not repeat it" if action else ""
                label = f"result of {function['name']}({function['arguments'][:80]}){flag}: {_clip(text_of(message))}"
            elif message.get("tool_calls"):
                action, label = (
                    False,
                    "assistant called " + ", ".join(c["function"]["name"] for c in message["tool_calls"]),
                )
            else:
                action, label = False, f"{message['role']}: {_clip(text_of(message))}"
            rows.append((action, f"- lines {first}-{last}: {label}"))
        if len(rows) > limit:  # keep every action, then the newest rows
            keep = {i for i, (action, _) in enumerate(rows) if action} | set(range(len(rows) - limit, len(rows)))
            rows = [row if i in keep else (False, "") for i, row in enumerate(rows)]
        lines = [line for _, line in rows if line]
        omitted = len(rows) - len(lines)
        more = [f"- … {omitted} older message(s): search the archive with file_regex"] if omitted else []
        return f"{INDEX_HEADING}\n" + "\n".join(more + lines)

    def _summary_text(
        self, run: Run, span: list[Message], archive: Transcript, archive_id: str, offset: int, limit: int | None
    ) -> tuple[str, str, dict[str, Any] | None]:
        local = Transcript(archive.text, archive.spans[offset : offset + len(span)])
        fallback = deterministic_summary(span, local, mutating=self.mutating)
        clipped = self._bounded_transcript(span, limit)
        try:
            if self.custom is not None:
                text = self.custom(span, clipped.text)
                return (text, "custom", None) if text and text.strip() else (fallback, "fallback", None)
            if self.model is None:
                return fallback, "deterministic", None
            return self._call_model(run, clipped, archive_id, fallback)
        except Exception as error:  # a custom compactor or the model failing must never end the run
            logger.warning("error=<%s> | summary failed, using the deterministic summary", type(error).__name__)
            run.record.event(CompactionFallback(error=type(error).__name__))
            return fallback, "fallback", None

    def _bounded_transcript(self, span: list[Message], limit: int | None) -> Transcript:
        """The summary call's input: each message clipped, tighter until the whole fits the window."""
        clip = CLIP_TOKENS
        clipped = render(span, title="", counter=self.counter, clip=clip, briefs=self.briefs)
        while limit is not None and clip > 64 and self.counter.text(clipped.text) > limit:
            clip //= 2
            clipped = render(span, title="", counter=self.counter, clip=clip, briefs=self.briefs)
        if limit is not None and self.counter.text(clipped.text) > limit:  # many messages: keep what fits
            cut = self.counter.truncate(clipped.text, max(limit, 0))
            clipped = Transcript(cut + "\n[... the rest is in the archive]\n", clipped.spans)
        return clipped

    def _call_model(
        self, run: Run, clipped: Transcript, archive_id: str, fallback: str
    ) -> tuple[str, str, dict[str, Any] | None]:
        assert self.model is not None
        request = ModelRequest(
            messages=[
                msgs.system(SUMMARY_SYSTEM),
                msgs.user(summary_request(clipped, archive_id=archive_id, custom=self.instructions)),
            ],
            max_output_tokens=self.max_summary_tokens,
            timeout=None if run.deadline.at is None else max(run.deadline.remaining(), 0.001),
        )
        prompt = self.counter.messages(request.messages)  # what an attempt cut short is charged

        def cut() -> dict[str, int]:
            return {"prompt_tokens": prompt, "completion_tokens": 0, "total_tokens": prompt, "cached_tokens": 0}

        try:
            response = self.model.complete(request)
        except ModelError as error:
            run.record.attempts(run.state.turn, error.failures, estimate=cut, purpose="compaction")
            raise
        run.record.attempts(run.state.turn, response.failures, estimate=cut, purpose="compaction")
        entry = {"turn": run.state.turn, "purpose": "compaction", **response.to_record()}
        run.record.add_call(entry, source="compaction", estimate=lambda: _estimate_of(self.counter, request, response))
        text = response.text or ""
        if not text.strip() or response.tool_calls:
            return fallback, "fallback", entry["usage"]
        return text, "summary", entry["usage"]


def _estimate_of(counter: TokenCounter, request: ModelRequest, response: ModelResponse) -> dict[str, int]:
    """A summary call's usage, counted, for an endpoint that reports none."""
    prompt, reply = counter.messages(request.messages), counter.text(response.text or "")
    return {"prompt_tokens": prompt, "completion_tokens": reply, "total_tokens": prompt + reply, "cached_tokens": 0}


def _clip(text: str, limit: int = 80) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit + 1].rsplit(" ", 1)[0] + "…"  # a word's end: see prompts


def remember_facts(run: Run, span: list[Message]) -> list[str]:
    facts = list(dict.fromkeys([*FACTS.get(run.state.context), *extract(span)]))
    FACTS.set(run.state.context, facts[-MAX_FACTS:])
    return facts


def _pinned(missing: list[str], archive: Transcript, limit: int = MAX_PINNED) -> str:
    if not missing:
        return ""
    rows = []
    if len(missing) > limit:  # the user's keys and words first, the engine's file ids, then dates and numbers
        kept = set(sorted(missing, key=fact_rank)[:limit])
        missing = [item for item in missing if item in kept] + [item for item in missing if item not in kept]
    for item in missing[:limit]:
        position = archive.text.find(item)
        where = f" (archive line {archive.text.count(chr(10), 0, position) + 1})" if position >= 0 else ""
        rows.append(f"- {item}{where}")
    more = len(missing) - limit
    if more > 0:
        rows.append(f"- … and {more} more: search the archive with file_regex")
    return "## Pinned facts (verbatim, checked by the runtime)\n" + "\n".join(rows)
