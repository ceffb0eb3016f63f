"""The per-run ledger: token budget, per-file sizes, read coverage and the record of every read.

Its state is plain JSON inside ``RunState.context`` so it survives checkpoints, resumes and thread turns.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

from ..events import FileRead
from ..files import FileMeta, is_text
from ..state import Slot
from .counter import TokenCounter
from .coverage import add_interval

if TYPE_CHECKING:
    from ..steps import Run

STATUS_RESERVE = 400  # room kept for the status message itself
_COUNT_BATCH = 2000  # lines per tokenizer call when sizing a file


class FileCoverage(TypedDict):
    """What the run knows of one file: its size, what was read of it (1-based line and 0-based byte ranges)."""

    read_lines: list[list[int]]
    read_bytes: list[list[int]]
    reads: int
    preloaded: bool
    tokens: int | None
    lines: int | None


FILES: Slot[dict[str, FileCoverage]] = Slot("files", dict, owner=__name__)


class RunLedger:
    """Implements :class:`~agent_runtime.run_context.Ledger` for one run."""

    def __init__(
        self, run: Run, counter: TokenCounter, *, remaining: Callable[[], int], scale: Callable[[], float]
    ) -> None:
        self.run = run
        self.counter = counter
        self._remaining = remaining
        self._scale = scale
        self.state = FILES.use(run.state.context)
        # Called on every read (e.g. a sub-agent forwards reads of shared files to its parent's ledger).
        self.listeners: list[Callable[..., None]] = []

    # Budget, in the server's tokens (tiktoken's count times the calibrated scale)
    def remaining_tokens(self) -> int:
        """What one read may add (the engine's read budget: see ContextEngine.read_budget)."""
        return self._remaining()

    def count(self, text: str) -> int:
        return math.ceil(self.counter.text(text) * self._scale())

    # Files
    def file_lines(self, file_id: str) -> int | None:
        return self.file_state(self.run.context.files.meta(file_id)).get("lines")

    def file_state(self, meta: FileMeta) -> FileCoverage:
        entry = self.state.get(meta.id)
        if entry is None:
            entry = {"read_lines": [], "read_bytes": [], "reads": 0, "preloaded": False, "tokens": None, "lines": None}
            self.state[meta.id] = entry
        if entry["tokens"] is None and is_text(meta):
            entry["tokens"], entry["lines"] = self._size(meta.id)
        return entry

    def seen_whole(self, meta: FileMeta, text: str) -> None:
        """A file of what the model has already read whole (a masked output): sized from the text, fully read
        (the status then has no reason to list it: its pointer names it)."""
        lines = text.count("\n") + (0 if not text or text.endswith("\n") else 1)
        self.state[meta.id] = {
            "read_lines": [[1, lines]] if lines else [],
            "read_bytes": [],
            "reads": 0,
            "preloaded": False,
            "tokens": self.counter.text(text),
            "lines": lines,
        }

    def _size(self, file_id: str) -> tuple[int, int]:
        tokens, lines, batch = 0, 0, []
        for number, _, text in self.run.context.files.iter_lines(file_id):
            batch.append(text)
            lines = number
            if len(batch) >= _COUNT_BATCH:
                tokens += self.counter.text("\n".join(batch)) + 1
                batch = []
        tokens += self.counter.text("\n".join(batch)) if batch else 0
        return tokens, lines

    def record_read(
        self, file_id: str, *, tool: str, lines: tuple[int, int] | None = None, bytes_: tuple[int, int] | None = None
    ) -> None:
        entry = self.file_state(self.run.context.files.meta(file_id))
        entry["reads"] += 1
        if lines is not None:
            entry["read_lines"] = add_interval(entry["read_lines"], *lines)
        if bytes_ is not None:
            entry["read_bytes"] = add_interval(entry["read_bytes"], *bytes_)
        self.run.record.event(
            FileRead(
                file=file_id,
                tool=tool,
                turn=self.run.state.turn,
                lines=list(lines) if lines else None,
                bytes=list(bytes_) if bytes_ else None,
            )
        )
        for listener in self.listeners:
            listener(file_id, tool=tool, lines=lines, bytes_=bytes_)
