"""Compaction: cheapest tactic first, every step archived, verified and checked for validity.

1. The window is saved as an archive file (a readable transcript with line numbers) before anything changes.
2. Masking: old, already-used tool outputs become pointers to their file (or to the archive). Free.
3. Summary: the oldest ``compaction_ratio`` of the history becomes one structured summary message that cites
   archive line ranges; identifiers and user constraints are checked against it and pinned when missing.
4. The degradation ladder (``ladder.py``) when that is not enough: the largest messages still inline become
   virtual files with previews sized to fit; as the last resort the oldest turns leave for the archive.
5. The result is validated (no orphaned tool call or result). It can only miss the threshold when the system
   prompt and the tool definitions alone leave no room: a configuration error the engine reports at run start.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from .. import messages as msgs
from ..errors import ConfigError, RunError
from ..events import CompactionFallback, CompactionReused
from ..files.store import file_id_for
from ..messages import Message, text_of
from ..models import Model, ModelError, ModelRequest, ModelResponse
from ..state import Slot
from .counter import TokenCounter
from .history import MASK_MARK, SUMMARY_MARK, VIRTUAL_MARK, check_history
from .identifiers import extract, fact_rank, identifiers_in, missing_from
from .ladder import Offloader, drop_oldest, naming, newest_outputs, offload_arguments, offload_largest
from .ledger import RunLedger
from .prompts import SUMMARY_SYSTEM, deterministic_summary, summary_request
from .transcript import Transcript, render

if TYPE_CHECKING:
    from ..loop import Run

logger = logging.getLogger(__name__)


class CompactionEntry(TypedDict):
    number: int
    tactic: str
    archive_file: str


COMPACTIONS: Slot[list[CompactionEntry]] = Slot("compactions", list, owner=__name__)
# Identifiers the compacted turns named (paths, ids, numbers): later summaries must keep them.
FACTS: Slot[list[str]] = Slot("facts", list, owner=__name__)
MAX_FACTS = 1_000
# Why summaries stopped in this run (one freed too little): compactions then use the ladder only.
SUMMARIES_OFF: Slot[str | None] = Slot("summaries_off", lambda: None, owner=__name__)
MIN_SUMMARY_INPUT = 800  # tokens of transcript a summary call must be able to read to be worth its call
MIN_SUMMARY_GAIN = 0.1  # a summary must free this share of the window it compacts ...
MIN_SUMMARY_GAIN_TOKENS = 100  # ... and at least this many tokens
MIN_MASK_TOKENS = 200  # smaller outputs are cheaper to keep than to point at
# Identifiers a mask pointer names: every pointer stays in the (cached) prefix for the rest of the run.
MASK_NAMED = 5
CLIP_TOKENS = 1_500  # per message, in the summary call's input (the archive keeps everything)
MAX_PINNED = 150
MAX_INDEX_ROWS = 60
MIN_ROWS = 8
TOKENS_PER_ROW = 100  # index rows allowed per token of the compaction's target: ~25 tokens a row, a quarter of it
STILL_IN_FORCE = "## Still in force (kept verbatim through compaction)"
INDEX_HEADING = "## Archive index (what left the window, by archive line)"
_VIRTUAL_HEADER = re.compile(re.escape(VIRTUAL_MARK) + r"(?P<id>file-[0-9a-f]+):")
_READ_HEADER = re.compile(r"^\[(?P<name>.+) \((?P<id>file-[0-9a-f]+)\) lines (?P<a>\d+)-(?P<b>\d+) of \d+[\];]")

CustomSummarizer = Callable[[list[Message], str], str]


class SummaryMemo(Protocol):
    """Remembers summaries by (run, span), so a retried invocation never summarizes or bills twice."""

    def get(self, run_id: str, key: str) -> dict[str, Any] | None: ...

    def put(self, run_id: str, key: str, value: dict[str, Any]) -> None: ...


class CompactionError(RunError):
    """Compaction could not bring the window under its threshold; the run stops instead of looping."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What the engine asks for: measure a candidate window, and the sizes to reach."""

    measure: Callable[[list[Message]], int]
    target: int  # masking alone must reach this to be enough
    limit: int  # the result should be under this (the threshold); the ladder runs until it is
    trigger: str  # "threshold", "overflow" or "window"
    offload: Offloader | None = None  # stores a message's text as a virtual file (the ladder's first rung)
    preview_tokens: int = 1_000  # the largest preview the ladder leaves inline
    summary_input: int | None = None  # tiktoken tokens the summary call's transcript may take (it must fit too)
    hard_limit: int | None = None  # the input budget: the ladder's last goal (default: ``limit``)
    absolute: int | None = None  # over this nothing may be sent: the window less the smallest reply (default: hard)


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


class Compactor:
    def __init__(
        self,
        counter: TokenCounter,
        *,
        ratio: float,
        mutating: set[str],
        pinned: set[str] | None = None,
        kept: set[str] | None = None,
        model: Model | None = None,
        max_summary_tokens: int = 4096,
        custom: CustomSummarizer | None = None,
        instructions: str | None = None,
        memo: SummaryMemo | None = None,
    ) -> None:
        self.counter = counter
        self.ratio = ratio
        self.mutating = mutating
        self.pinned = pinned or set()  # e.g. load_skill: results survive every compaction verbatim
        self.kept = kept or set()  # e.g. python, subagent: conclusions, never masked (compaction summarises them)
        self.model = model
        self.max_summary_tokens = max_summary_tokens
        self.custom = custom
        self.instructions = instructions
        self.memo = memo

    def compact(self, run: Run, plan: Plan) -> dict[str, Any]:
        """Shrink ``run.state.messages`` in place; return the run-record event."""
        messages = list(run.state.messages)
        before = plan.measure(messages)
        number = len(COMPACTIONS.get(run.state.context)) + 1
        archive = render(
            messages, title=f"# Context archive #{number} · run {run.state.run_id} · {len(messages)} messages"
        )
        meta = run.context.files.put(archive.text.encode(), name=f"context-archive-{number}.md", source="archive")
        run.record.files.append(meta.to_dict())
        event: dict[str, Any] = {"number": number, "trigger": plan.trigger, "tokens_before": before}
        event |= {"archive_file": meta.id, "messages_before": len(messages)}
        masked = self.mask(run, messages, enough=lambda candidate: plan.measure(candidate) <= plan.target)
        if plan.measure(masked) <= plan.target:
            return self._apply(run, masked, plan, event | {"tactic": "masking"})
        candidate, details = masked, {"tactic": "masking"}
        rungs: list[str] = []
        lead = next((i for i, m in enumerate(candidate) if m["role"] != "system"), len(candidate))
        cut = self._cut(candidate, lead)
        if cut is None or not self._feasible(candidate, lead, cut, plan):  # the newest part is the problem
            candidate = self._offload(candidate, plan, rungs)
            cut = self._cut(candidate, lead)
        if plan.measure(candidate) > plan.target and cut is not None and self._summaries_help(run, plan):
            summarized, details = self._summarize(run, candidate, archive, meta.id, number, (lead, cut), plan)
            candidate, details = self._kept_if_it_helps(run, candidate, summarized, details, plan)
        if plan.measure(candidate) > plan.limit:
            candidate = self._offload(candidate, plan, rungs)
        if plan.measure(candidate) > plan.limit:
            before_drop = candidate
            candidate, dropped = drop_oldest(candidate, measure=plan.measure, goal=plan.target, archive_id=meta.id)
            _remember_facts(run, before_drop[lead : lead + dropped])  # later summaries pin what these turns named
            rungs.append(f"drop:{dropped}")
        if rungs:
            details = details | {"tactic": "+".join([details["tactic"], *(r.split(":")[0] for r in rungs)])}
        return self._apply(run, candidate, plan, event | details | ({"ladder": rungs} if rungs else {}))

    def _summaries_help(self, run: Run, plan: Plan) -> bool:
        """A summary costs a model call: not when the call's transcript would be a few hundred tokens (a window
        of 2k-4k), and not after one freed too little (the ladder then offloads and drops, for free)."""
        if SUMMARIES_OFF.get(run.state.context):
            return False
        return plan.summary_input is None or plan.summary_input >= MIN_SUMMARY_INPUT

    def _kept_if_it_helps(
        self, run: Run, before: list[Message], after: list[Message], details: dict[str, Any], plan: Plan
    ) -> tuple[list[Message], dict[str, Any]]:
        """The summary, if it freed at least a tenth of the window it replaced; else the window as it was, and no
        more summaries in this run (a small window's summary can even be larger than what it replaced)."""
        was, now = plan.measure(before), plan.measure(after)
        if was - now >= max(MIN_SUMMARY_GAIN_TOKENS, was * MIN_SUMMARY_GAIN):
            return after, details
        SUMMARIES_OFF.set(run.state.context, f"a summary freed {was - now:,} of {was:,} tokens")
        return before, {"tactic": "masking", "summary_discarded": {"tokens_before": was, "tokens_after": now}}

    def _offload(self, messages: list[Message], plan: Plan, rungs: list[str]) -> list[Message]:
        """Older messages first, to the target; the newest outputs (the model has not seen them) only when the
        window itself cannot hold them, and then with the largest preview that fits."""
        if plan.offload is None:
            return messages
        newest = newest_outputs(messages)
        older = set(range(len(messages))) - newest
        offload = partial(offload_largest, measure=plan.measure, offloader=plan.offload, counter=self.counter)
        result, count = offload(messages, goal=plan.target, preview_cap=plan.preview_tokens, among=older)
        window = plan.hard_limit or plan.limit  # past the threshold is allowed for them; past the window is not
        if plan.measure(result) > window and newest:
            result, more = offload(result, goal=window, preview_cap=window, among=newest)
            count += more
        if count:
            rungs.append(f"offload:{count}")
        if plan.measure(result) > plan.target:  # what the model wrote into its calls: a document as an argument
            result, moved = offload_arguments(
                result, measure=plan.measure, goal=plan.target, offloader=plan.offload, counter=self.counter
            )
            if moved:
                rungs.append(f"arguments:{moved}")
        return result

    def _apply(self, run: Run, new: list[Message], plan: Plan, event: dict[str, Any]) -> dict[str, Any]:
        check_history(new, where=f"compaction ({event['tactic']})")
        after = plan.measure(new)
        event |= {"tokens_after": after, "messages_after": len(new)}
        limit = plan.absolute or plan.hard_limit or plan.limit
        if after > limit:  # over the input budget but within the window: sent with a smaller reply cap
            raise CompactionError(
                f"compaction freed too little: {event['tokens_before']:,} → {after:,} tokens, but the window must "
                f"stay under {limit:,} even with every message offloaded to a file: the system "
                "prompt and the tool definitions take too much of it. Raise context.context_budget or use a larger "
                "window."
            )
        run.state.messages[:] = new
        self.counter.forget_except(new)
        COMPACTIONS.use(run.state.context).append(
            {"number": event["number"], "tactic": event["tactic"], "archive_file": event["archive_file"]}
        )
        return event

    # Masking
    def mask(self, run: Run, messages: list[Message], *, enough: Callable[[list[Message]], bool]) -> list[Message]:
        """Replace used tool outputs, oldest first, with pointers to where they can be read again."""
        return self.mask_these(run, messages, self.maskable(messages), enough=enough)

    def mask_these(
        self,
        run: Run,
        messages: list[Message],
        outputs: list[tuple[int, str]],
        *,
        enough: Callable[[list[Message]], bool] = lambda _: False,
    ) -> list[Message]:
        """Replace the given outputs ((index, tool name), oldest first) with pointers."""
        result = list(messages)
        for index, name in outputs:
            message = result[index]
            pointer = self._pointer(run, message, name, self.counter.message(message))
            result[index] = msgs.tool_result(message.get("tool_call_id", ""), pointer)
            if enough(result):
                break
        return result

    def maskable(self, messages: list[Message]) -> list[tuple[int, str]]:
        """(index, tool name) of outputs worth masking: used (the model answered after them), not from a
        mutating tool, not already a pointer, and big enough to be worth a pointer."""
        last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=0)
        return self.maskable_between(messages, 0, last_assistant, msgs.tool_names(messages))

    def maskable_between(
        self, messages: list[Message], start: int, end: int, names: dict[str, str]
    ) -> list[tuple[int, str]]:
        """:meth:`maskable` over ``messages[start:end]``, with the tool names of the calls seen so far (the
        engine's rolling mask scans only what is new each turn)."""
        found = []
        for index in range(start, end):
            message = messages[index]
            for call in message.get("tool_calls", []):
                names[call["id"]] = call["function"]["name"]
            name = names.get(message.get("tool_call_id", ""), "")
            kept = name in self.mutating or name in self.pinned or name in self.kept
            if message["role"] != "tool" or kept or text_of(message).startswith(MASK_MARK):
                continue
            if self.counter.message(message) >= MIN_MASK_TOKENS:
                found.append((index, name))
        return found

    def pointer_tokens(self, message: Message, tool: str) -> int:
        """The size the output's pointer will have (nothing is stored): what masking it would save."""
        pointer = self._pointer(None, message, tool, self.counter.message(message))
        return self.counter.message(msgs.tool_result(message.get("tool_call_id", ""), pointer))

    def _pointer(self, run: Run | None, message: Message, tool: str, tokens: int) -> str:
        """Where a masked output is, and the identifiers it named (ticket keys, ids, paths, numbers): the model
        keeps sight of what it found without reading it again. ``run`` None: the text only, nothing stored."""
        return naming(self._where(run, message, tool, tokens), identifiers_in(text_of(message)), MASK_NAMED)

    def _where(self, run: Run | None, message: Message, tool: str, tokens: int) -> str:
        text = text_of(message)
        read = _READ_HEADER.match(text)
        if read:
            a, b, fid = read["a"], read["b"], read["id"]
            return (
                f"{MASK_MARK}{read['name']} lines {a}-{b} ({fid}), {tokens:,} tokens: the same file_read call "
                "returns them again]"
            )
        virtual = _VIRTUAL_HEADER.match(text)
        if virtual:
            fid = virtual["id"]
            return f'{MASK_MARK}the preview of virtual file {fid}; again: file_read(id="{fid}")]'
        name, data = f"{tool}-{message.get('tool_call_id', 'result')}.txt", text.encode("utf-8")
        fid = file_id_for(name, data)
        if run is not None:
            meta = run.context.files.put(data, name=name, mimetype="text/plain", source="archive")
            run.record.files.append(meta.to_dict())
            if isinstance(run.context.ledger, RunLedger):
                run.context.ledger.seen_whole(meta, text)
        return f'{MASK_MARK}the {tool} result, {tokens:,} tokens; again: file_read(id="{fid}")]'

    # Summary
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

    def _feasible(self, messages: list[Message], lead: int, cut: int, plan: Plan) -> bool:
        """Can a summary help? Not when what is kept verbatim after it cannot fit anyway (offload that first)."""
        kept = [*messages[:lead], msgs.user(" " * 4 * self.max_summary_tokens), *messages[cut:]]
        return plan.measure(kept) <= plan.limit

    def _summarize(
        self,
        run: Run,
        messages: list[Message],
        archive: Transcript,
        archive_id: str,
        number: int,
        bounds: tuple[int, int],
        plan: Plan,
    ) -> tuple[list[Message], dict[str, Any]]:
        lead, cut = bounds
        span = messages[lead:cut]
        body, tactic, usage = self._remembered(
            run, span, lambda: self._summary_text(run, span, archive, archive_id, lead, plan.summary_input)
        )
        facts = _remember_facts(run, span)
        missing = missing_from(body, facts)
        rows = max(MIN_ROWS, min(MAX_INDEX_ROWS, plan.target // TOKENS_PER_ROW))  # a small window, a short list
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

    def _cut(self, messages: list[Message], lead: int) -> int | None:
        """The first index kept verbatim: never a tool result (its call would be summarized away). None when the
        history is a single turn: there is nothing older to summarize."""
        last_safe = max((i for i in range(lead + 1, len(messages)) if messages[i]["role"] != "tool"), default=None)
        if last_safe is None:
            return None
        total = sum(self.counter.message(m) for m in messages[lead:])
        running = 0
        for index in range(lead, last_safe):
            running += self.counter.message(messages[index])
            if running >= total * self.ratio and messages[index + 1]["role"] != "tool":
                return index + 1
        return last_safe

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
        clipped = render(span, title="", counter=self.counter, clip=clip)
        while limit is not None and clip > 64 and self.counter.text(clipped.text) > limit:
            clip //= 2
            clipped = render(span, title="", counter=self.counter, clip=clip)
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
        try:
            response = self.model.complete(request)
        except ModelError as error:
            run.record.attempts(run.state.turn, error.failures, purpose="compaction")
            raise
        run.record.attempts(run.state.turn, response.failures, purpose="compaction")
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


def _remember_facts(run: Run, span: list[Message]) -> list[str]:
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
