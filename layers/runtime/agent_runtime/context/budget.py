"""The window's numbers and their calibration against the server's own token counts.

tiktoken is exact for OpenAI's models; other servers tokenize differently (a llama.cpp server with Gemma counted
42-54 % more). Every response's ``usage.prompt_tokens`` and every overflow error that states numbers teach the
engine a scale (server tokens per tiktoken token), kept in the run's state so a thread and a resumed run keep it.
The engine counts with tiktoken and multiplies: every budget is then in the server's tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, TypedDict

from ..state import Slot

MAX_SCALE = 4.0  # beyond this the endpoint is not the model the workflow names: do not chase it
CALIBRATE_MIN_TOKENS = 1_000  # small requests are dominated by per-message template overhead: too noisy
HEADROOM = 1.02  # the same server drifts a little from one request to the next
UNKNOWN_OVERFLOW_STEP = 1.25  # an overflow that states no numbers: assume a quarter more
MIN_OUTPUT_RESERVE = 256  # a reply's room, at the least, in a server window smaller than the workflow's
# What a warm process has learned per endpoint and model: a worker's next run starts calibrated (a run's own
# state still wins: a thread keeps what its runs learned).
_LEARNED: dict[str, Calibration] = {}


class CalibrationState(TypedDict, total=False):
    scale: float
    server_window: int | None
    counted: bool  # the server counted a whole request once (its tokenizer and template): the scale starts there


class WindowState(TypedDict):
    """The last request's size, written by the engine each turn (the trace and the record read it)."""

    turn: int
    used: int  # in the server's tokens (calibrated)
    usable: int
    estimated: int  # tiktoken's count, before calibration


CALIBRATION: Slot[CalibrationState | None] = Slot("calibration", lambda: None, owner=__name__)
WINDOW: Slot[WindowState | None] = Slot("window", lambda: None, owner=__name__)


@dataclass(frozen=True, slots=True)
class Window:
    """The configured window: ``context_window`` (or ``context_budget``), the output reserve, the threshold."""

    window: int
    output_reserve: int
    threshold: float

    @property
    def usable(self) -> int:
        return self.window - self.output_reserve

    @property
    def compaction_at(self) -> int:
        return int(self.usable * self.threshold)

    def for_server(self, server_window: int | None) -> Window:
        """The window the server really has, when it said so and it is smaller than the configured one. The output
        reserve shrinks with it (an eighth of the window at most): document-feedback's 4,096 output tokens would
        leave nothing of a 4,096 server."""
        if server_window is None or server_window >= self.window:
            return self
        reserve = min(self.output_reserve, max(MIN_OUTPUT_RESERVE, server_window // 8))
        return replace(self, window=server_window, output_reserve=reserve)


@dataclass(slots=True)
class Calibration:
    scale: float = 1.0
    server_window: int | None = None
    counted: bool = False

    def scaled(self, tokens: int) -> int:
        return tokens if self.scale == 1.0 else math.ceil(tokens * self.scale)

    def learn_usage(self, estimated: int | None, prompt_tokens: int, *, exact: bool = False) -> bool:
        """Raise the scale when the server counted more than we did; True when it changed. ``exact``: the server
        counted this very request (no noise from a small one's template overhead to ignore)."""
        if not estimated or (estimated < CALIBRATE_MIN_TOKENS and not exact):
            return False
        ratio = prompt_tokens / estimated * HEADROOM
        if ratio <= self.scale * 1.01:
            return False
        self.scale = min(MAX_SCALE, ratio)
        return True

    def learn_overflow(
        self, estimated: int | None, prompt_tokens: int | None, window: int | None, configured: int
    ) -> dict[str, Any]:
        """The server refused a request as too long: take its numbers, or assume a quarter more."""
        if window and window < (self.server_window or configured):
            self.server_window = window
        if prompt_tokens and estimated:
            self.scale = min(MAX_SCALE, max(self.scale, prompt_tokens / estimated * HEADROOM))
        elif not window:
            self.scale = min(MAX_SCALE, self.scale * UNKNOWN_OVERFLOW_STEP)
        return {"scale": round(self.scale, 3), "server_window": self.server_window, "server_prompt": prompt_tokens}

    @classmethod
    def restore(cls, context: dict[str, Any], key: str | None = None) -> Calibration:
        saved = CALIBRATION.get(context)
        if saved is None and key is not None and key in _LEARNED:
            known = _LEARNED[key]
            return cls(scale=known.scale, server_window=known.server_window, counted=known.counted)
        saved = saved or {}
        return cls(float(saved.get("scale", 1.0)), saved.get("server_window"), bool(saved.get("counted", False)))

    def save(self, context: dict[str, Any], key: str | None = None) -> None:
        CALIBRATION.set(context, {"scale": self.scale, "server_window": self.server_window, "counted": self.counted})
        if key is not None:
            _LEARNED[key] = Calibration(self.scale, self.server_window, self.counted)
