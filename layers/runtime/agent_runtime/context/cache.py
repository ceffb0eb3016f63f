"""When rewriting the history pays for the prompt cache it breaks.

A server bills the prefix a request shares with the previous one at its cached rate (OpenAI: a quarter of the
input price; a local server reuses its KV cache, which is time, with the same shape). Masking or folding
rewrites the history from its first changed message: what the previous request had from there on is billed
again in full, once; what the change removes is never billed again. So a change pays when

    (1 - r) * lost <= saved * (1 + r * H)

* ``lost``: tokens of the previous request from the first changed message on (cached before, billed in full now);
* ``saved``: tokens the change removes from the history;
* ``r``: the cached price over the input price (the model's prices, else OpenAI's 0.25);
* ``H``: the requests still to come, guessed as many as the run has made so far (a run that has gone t turns
  is as likely as not to go t more), and never more than its tool calls left.

(This request costs ``saved`` less and ``(1 - r) * lost`` more; each later one costs ``r * saved`` less.)
Masking the output the model has just read loses almost nothing (it is at the end of the previous request),
so it always pays; masking an old output behind a large kept one, or folding a handful of turns near the end
of a run, may not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..messages import Message
from ..models.prices import Prices
from .counter import TokenCounter

DEFAULT_CACHED_RATIO = 0.25  # OpenAI's cached input price over its input price


@dataclass(frozen=True, slots=True)
class Break:
    """One proposed rewrite of the history, priced."""

    lost: int  # tokens of the previous request no longer cached
    saved: int  # tokens the rewrite removes
    horizon: int  # requests still expected
    ratio: float  # cached price / input price

    @property
    def pays(self) -> bool:
        return (1 - self.ratio) * self.lost <= self.saved * (1 + self.ratio * self.horizon)

    def to_dict(self) -> dict[str, Any]:
        """For the run record: the estimate behind the decision, in input-price tokens."""
        return {
            "lost_tokens": self.lost,
            "saved_tokens": self.saved,
            "horizon": self.horizon,
            "cached_ratio": round(self.ratio, 4),
            "break_cost": round((1 - self.ratio) * self.lost - self.saved, 1),  # this request, extra
            "saving_per_turn": round(self.ratio * self.saved, 1),  # every later request
        }


def cached_ratio(prices: Prices | None) -> float:
    if prices is None or prices.input <= 0:
        return DEFAULT_CACHED_RATIO
    return min(1.0, max(0.0, prices.cached_input / prices.input))


def horizon(turn: int, calls_left: int | None) -> int:
    """Requests still to come: as many as so far, at most one per tool call left (and the answer)."""
    guess = max(1, turn)
    return guess if calls_left is None else max(1, min(guess, calls_left + 1))


class Prefix:
    """How much of the history the previous request had, unchanged: what the server's cache can serve.

    The loop only appends; the engine's own rewrites (masking, folding, compaction) say where they begin."""

    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self.kept = 0  # leading messages of the history the previous request had, unchanged
        self._anchor: Message | None = None  # the last kept message, to notice a history replaced elsewhere

    def restore(self, messages: list[Message]) -> None:
        """A run (re)starts: its stored history is taken as what the last request had."""
        self.kept = len(messages)
        self._anchor = messages[-1] if messages else None

    def check(self, messages: list[Message]) -> None:
        if self.kept > len(messages) or (self.kept and messages[self.kept - 1] is not self._anchor):
            self.kept = 0  # replaced by someone else: nothing known to be cached

    def lost(self, messages: list[Message], index: int) -> int:
        """Tokens of the previous request a rewrite from ``index`` on stops from being cached (O(what it loses))."""
        return sum(self.counter.message(messages[i]) for i in range(index, self.kept))

    def changed(self, messages: list[Message], index: int) -> None:
        """The history was rewritten from ``index`` on (``messages`` is the new history)."""
        self.kept = min(self.kept, index)
        self._anchor = messages[self.kept - 1] if self.kept else None

    def sending(self, messages: list[Message]) -> int:
        """The request is about to go: returns how many leading messages it shares with the previous one, and
        takes it as the previous one from now on."""
        shared = min(self.kept, len(messages))
        self.kept = len(messages)
        self._anchor = messages[-1] if messages else None
        return shared
