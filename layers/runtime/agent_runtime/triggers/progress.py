"""The "working…" message: updated as the run goes (step, tools, tokens), replaced by the answer at the end."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..events import ProgressUpdateFailed
from ..hooks import Hook

if TYPE_CHECKING:
    from ..loop import Run
    from ..models import ToolCall
    from ..tools import ToolOutcome


class ProgressHook(Hook):
    """Calls ``show(text)`` after steps, at most every ``interval`` seconds (Slack allows ~1 update/s/channel)."""

    def __init__(self, show: Callable[[str], None], *, workflow: str, interval: float = 3.0) -> None:
        self.show, self.workflow, self.interval = show, workflow, interval
        self._last = 0.0
        self._tools: list[str] = []

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        self._tools.append(call.name)
        return None

    def after_step(self, run: Run) -> None:
        now = time.monotonic()
        if now - self._last < self.interval:
            return
        self._last = now
        tokens = run.record.usage_totals()["total_tokens"]
        tools = ", ".join(dict.fromkeys(self._tools[-3:])) or "thinking"
        self._tools.clear()
        try:
            self.show(
                f":hourglass_flowing_sand: Working on it ({self.workflow}) · step {run.state.turn} · {tools} · "
                f"{tokens:,} tokens"
            )
        except Exception:  # progress is cosmetic: a failed update must not fail the run
            run.record.event(ProgressUpdateFailed())
