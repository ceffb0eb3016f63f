"""The rolling mask: between compactions, used tool outputs become pointers, and old turns of pointers become
rows of a fold, each in a batch that pays for the prompt-cache break it causes (``cache.py``).

Each turn scans only what is new: the mask's scan and the fold's resume where the last turn's stopped (the
history only grows between rewrites, and a rewrite moves or restarts them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..events import Folding, Masking
from ..messages import Message
from .cache import Break, Prefix
from .compaction import Compactor
from .counter import TokenCounter
from .folding import MIN_FOLD_SAVED, Folder
from .history import check_history

if TYPE_CHECKING:
    from ..steps import Run


@dataclass
class _Scan:
    cursor: int = 0  # messages before it have been scanned for maskable outputs
    last: Message | None = None  # the message just before the cursor, when it was scanned
    names: dict[str, str] = field(default_factory=dict)  # tool call id -> tool name, of the calls scanned
    found: list[tuple[int, str]] = field(default_factory=list)  # maskable outputs so far: (index, tool name)
    tokens: int = 0  # their size


@dataclass(frozen=True, slots=True)
class Pricing:
    """What a break costs this turn: the cached/input price ratio and the requests still expected."""

    ratio: float
    horizon: int


class RollingMask:
    def __init__(self, counter: TokenCounter, compactor: Compactor, *, threshold: int, prefix: Prefix) -> None:
        self.counter = counter
        self.compactor = compactor
        self.threshold = threshold
        self.prefix = prefix
        self.folder = Folder(counter, unfoldable=compactor.mutating | compactor.pinned | compactor.kept)
        self._scan = _Scan()

    def reset(self) -> None:
        """The history was rewritten (compaction): scan it again."""
        self._scan = _Scan()
        self.folder.reset()

    def apply(
        self, run: Run, messages: list[Message], pricing: Pricing, measure: Callable[[list[Message]], int]
    ) -> list[Message]:
        scan = self._scan
        if scan.cursor > len(messages) or (scan.cursor and messages[scan.cursor - 1] is not scan.last):
            self.reset()  # replaced by someone else: scan it again (the identity of the last message scanned)
        end = self._newest_turn(messages)
        messages = self._mask(run, messages, end, pricing, measure)
        return self._fold(run, messages, end, pricing, measure)

    def _newest_turn(self, messages: list[Message]) -> int:
        """The newest assistant message: the outputs after it are not read yet; everything before it is used."""
        cursor = self._scan.cursor
        return next((i for i in range(len(messages) - 1, cursor - 1, -1) if messages[i]["role"] == "assistant"), cursor)

    # Masking
    def _mask(
        self, run: Run, messages: list[Message], end: int, pricing: Pricing, measure: Callable[[list[Message]], int]
    ) -> list[Message]:
        """Mask used outputs once they add up to the threshold, from the oldest one whose batch pays (an old
        output behind a large kept one may wait for a longer run, or for compaction)."""
        found = self._maskable(messages, end)
        if self._scan.tokens < self.threshold:
            return messages
        sizes = [self.counter.message(messages[i]) for i, _ in found]
        pointers = [self.compactor.pointer_tokens(messages[i], name) for i, name in found]
        for k in range(len(found)):
            saved = sum(sizes[k:]) - sum(pointers[k:])
            if sum(sizes[k:]) < self.threshold:
                break
            estimate = Break(self.prefix.lost(messages, found[k][0]), saved, pricing.horizon, pricing.ratio)
            if estimate.pays:
                return self._masked(run, messages, found[k:], estimate, measure)
        return messages

    def _masked(
        self,
        run: Run,
        messages: list[Message],
        batch: list[tuple[int, str]],
        estimate: Break,
        measure: Callable[[list[Message]], int],
    ) -> list[Message]:
        before = measure(messages)
        masked = self.compactor.mask_these(run, messages, batch)
        check_history(masked, where="masking")
        run.state.messages[:] = masked
        self.prefix.changed(masked, batch[0][0])
        scan = self._scan
        scan.found = scan.found[: len(scan.found) - len(batch)]  # the older ones that did not pay wait
        scan.tokens = sum(self.counter.message(masked[i]) for i, _ in scan.found)
        scan.last = masked[scan.cursor - 1] if scan.cursor else None
        after = measure(masked)
        run.record.event(
            Masking(
                turn=run.state.turn,
                outputs=len(batch),
                tokens_before=before,
                tokens_after=after,
                cache=estimate.to_dict(),
            )
        )
        return list(masked)

    def _maskable(self, messages: list[Message], end: int) -> list[tuple[int, str]]:
        """The maskable outputs, from a scan that resumes where the last turn's stopped: the history only grows
        between rewrites, which move the scan or start it again."""
        scan = self._scan
        new = self.compactor.maskable_between(messages, scan.cursor, end, scan.names)
        scan.found += new
        scan.tokens += sum(self.counter.message(messages[i]) for i, _ in new)
        scan.cursor, scan.last = end, messages[end - 1] if end else None
        return list(scan.found)

    # Folding
    def _fold(
        self, run: Run, messages: list[Message], end: int, pricing: Pricing, measure: Callable[[list[Message]], int]
    ) -> list[Message]:
        """Fold the run of old turns of pointers into one message when it frees enough and pays."""
        scan = self.folder.advance(messages, end)
        if scan.turns < 2 or self.folder.estimate() < MIN_FOLD_SAVED:
            return messages
        fold = self.folder.message()
        start, stop = scan.start, scan.cursor
        saved = scan.tokens - self.counter.message(fold)
        estimate = Break(self.prefix.lost(messages, start), saved, pricing.horizon, pricing.ratio)
        if saved < MIN_FOLD_SAVED or not estimate.pays:
            return messages
        before = measure(messages)
        folded = [*messages[:start], fold, *messages[stop:]]
        check_history(folded, where="folding")
        run.state.messages[:] = folded
        self.prefix.changed(folded, start)
        self._shift(start, stop - start - 1)
        self.folder.resume_after(start, fold)
        after = measure(folded)
        run.record.event(
            Folding(
                turn=run.state.turn,
                turns=scan.turns,
                messages=stop - start,
                tokens_before=before,
                tokens_after=after,
                cache=estimate.to_dict(),
            )
        )
        return list(folded)

    def _shift(self, start: int, removed: int) -> None:
        """The mask's scan after ``removed`` messages at ``start`` left: later indices move down."""
        scan = self._scan
        scan.found = [(i - removed if i > start else i, name) for i, name in scan.found]
        scan.cursor = scan.cursor - removed if scan.cursor > start else scan.cursor
