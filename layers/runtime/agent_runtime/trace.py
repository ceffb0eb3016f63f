"""The live trace on stderr: one line per turn and per tool call, never payloads unless asked."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from .hooks import Hook

if TYPE_CHECKING:
    from .loop import Run
    from .models import ModelResponse
    from .tools import ToolOutcome


class TraceHook(Hook):
    """Writes a human-readable progress trace. ``show_payloads`` adds tool arguments (off by default)."""

    def __init__(self, stream: TextIO | None = None, *, show_payloads: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.show_payloads = show_payloads

    def _write(self, line: str) -> None:
        print(line, file=self.stream, flush=True)

    def on_run_start(self, run: Run) -> None:
        files = len(run.record.files)
        self._write(f"▶ {run.workflow.name} · run {run.state.run_id} · model {run.record.model} · {files} file(s)")

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        window = run.workflow.model.context_window
        used = response.usage.total_tokens if response.usage else 0
        tools = f"{len(response.tool_calls)} tool call(s)" if response.tool_calls else "answer"
        retries = f" · {response.attempts - 1} retr{'y' if response.attempts == 2 else 'ies'}" * (response.attempts > 1)
        self._write(
            f"  turn {run.state.turn} · tokens {used:,}/{window:,} ({used / window:.1%}) · {tools}"
            f" · {response.latency_ms / 1000:.2f}s{retries}"
        )

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        mark = "✗" if outcome.is_error else "✓"
        args = f" {outcome.call.arguments}" if self.show_payloads else ""
        self._write(
            f"    {mark} {outcome.call.name}{args} · {outcome.duration_ms:.0f} ms · {len(outcome.content):,} chars"
        )
        return outcome

    def on_run_end(self, run: Run) -> None:
        record = run.record
        totals = record.usage_totals()
        detail = f" · {record.stop_reason}" if record.stop_reason else ""
        self._write(
            f"■ {record.status} · {run.state.turn} turn(s) · {len(record.tool_calls)} tool call(s)"
            f" · {totals['total_tokens']:,} tokens{detail}"
        )
