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

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypedDict

from .. import messages as msgs
from ..errors import RunError
from ..messages import Message
from ..models import Model
from ..state import Slot
from .counter import TokenCounter
from .history import check_history
from .ladder import Offloader, drop_oldest, newest_outputs, offload_arguments, offload_largest
from .masking import Masker
from .summarizing import CustomSummarizer, Summarizer, SummaryMemo, load_custom, remember_facts
from .transcript import render

if TYPE_CHECKING:
    from ..steps import Run

__all__ = ["COMPACTIONS", "CompactionError", "Compactor", "Plan", "SummaryMemo", "load_custom"]


class CompactionEntry(TypedDict):
    number: int
    tactic: str
    archive_file: str


COMPACTIONS: Slot[list[CompactionEntry]] = Slot("compactions", list, owner=__name__)
# Identifiers the compacted turns named (paths, ids, numbers): later summaries must keep them.
# Why summaries stopped in this run (one freed too little): compactions then use the ladder only.
SUMMARIES_OFF: Slot[str | None] = Slot("summaries_off", lambda: None, owner=__name__)
MIN_SUMMARY_INPUT = 800  # tokens of transcript a summary call must be able to read to be worth its call
MIN_SUMMARY_GAIN = 0.1  # a summary must free this share of the window it compacts ...
MIN_SUMMARY_GAIN_TOKENS = 100  # ... and at least this many tokens
# Identifiers a mask pointer names: every pointer stays in the (cached) prefix for the rest of the run.


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
        self.masker = Masker(counter, unmaskable=self.mutating | self.pinned | self.kept)
        self.summarizer = Summarizer(
            counter,
            mutating=mutating,
            pinned=self.pinned,
            model=model,
            max_summary_tokens=max_summary_tokens,
            custom=custom,
            instructions=instructions,
            memo=memo,
        )
        self.briefs = self.summarizer.briefs  # e.g. a tool search's result, by its found tools' names (toolsearch)

    # Masking: the rolling mask and folding mask through the same pointers (masking.py)
    def mask(self, run: Run, messages: list[Message], *, enough: Callable[[list[Message]], bool]) -> list[Message]:
        return self.masker.mask(run, messages, enough=enough)

    def mask_these(self, run: Run, messages: list[Message], outputs: list[tuple[int, str]]) -> list[Message]:
        return self.masker.mask_these(run, messages, outputs)

    def maskable_between(
        self, messages: list[Message], start: int, end: int, names: dict[str, str]
    ) -> list[tuple[int, str]]:
        return self.masker.maskable_between(messages, start, end, names)

    def pointer_tokens(self, message: Message, tool: str) -> int:
        return self.masker.pointer_tokens(message, tool)

    @property
    def max_summary_tokens(self) -> int:
        return self.summarizer.max_summary_tokens

    @max_summary_tokens.setter
    def max_summary_tokens(self, tokens: int) -> None:  # the engine sets it from the window it learns
        self.summarizer.max_summary_tokens = tokens

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
            summarized, details = self.summarizer.summarize(
                run, candidate, archive, meta.id, number, (lead, cut), plan.target, plan.summary_input
            )
            candidate, details = self._kept_if_it_helps(run, candidate, summarized, details, plan)
        if plan.measure(candidate) > plan.limit:
            candidate = self._offload(candidate, plan, rungs)
        if plan.measure(candidate) > plan.limit:
            before_drop = candidate
            candidate, dropped = drop_oldest(candidate, measure=plan.measure, goal=plan.target, archive_id=meta.id)
            remember_facts(run, before_drop[lead : lead + dropped])  # later summaries pin what these turns named
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

    def _feasible(self, messages: list[Message], lead: int, cut: int, plan: Plan) -> bool:
        """Can a summary help? Not when what is kept verbatim after it cannot fit anyway (offload that first)."""
        kept = [*messages[:lead], msgs.user(" " * 4 * self.max_summary_tokens), *messages[cut:]]
        return plan.measure(kept) <= plan.limit

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
