"""The live trace on stderr: one line per turn, tool call, virtual file, read and compaction.

Payloads (prompts, tool arguments, results) are never shown unless ``show_payloads`` is set.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TYPE_CHECKING, TextIO

from . import inert
from .context.budget import WINDOW
from .events import (
    Compaction,
    EndpointAdapted,
    FileRead,
    Folding,
    Masking,
    RunEvent,
    ServerDescribed,
    VirtualFile,
)
from .hooks import Hook
from .redaction import scrub
from .spend import describe

if TYPE_CHECKING:
    from .messages import Message
    from .models import ContextLengthExceededError, ModelError, ModelResponse
    from .models.stream import Progress
    from .steps import Run
    from .tools import ToolOutcome


class TraceHook(Hook):
    """Writes a human-readable progress trace. ``show_payloads`` adds tool arguments (off by default)."""

    def __init__(
        self, stream: TextIO | None = None, *, show_payloads: bool = False, indent: str = "", reason: bool = True
    ) -> None:
        self.stream = stream or sys.stderr
        self.show_payloads = show_payloads
        self.reason = reason  # False: the caller prints why the run stopped (the CLI's last line), once
        self.indent = indent  # sub-agent traces are nested under the call that started them
        self._seen = 0  # run-record events already printed
        self._waiting = _Waiting(self.stream, self.indent)

    def _write(self, line: str) -> None:
        """A line of the run's (tool names, a server's words, why it stopped): secrets out, then inert."""
        print(self.indent + inert.terminal(scrub(line)), file=self.stream, flush=True)

    def on_run_start(self, run: Run) -> None:
        self._seen = 0  # hooks before this one may already have recorded events (e.g. a virtual file)
        files = len(run.record.files)
        self._write(f"▶ {run.workflow.name} · run {run.state.run_id} · model {run.record.model} · {files} file(s)")
        self._flush(run)

    def before_model_call(self, run: Run, messages: list[Message]) -> list[Message]:
        self._waiting.start()
        return messages

    def on_model_progress(self, run: Run, progress: Progress) -> None:
        self._waiting.progress = progress  # the ticker shows it at its next second

    def on_model_error(self, run: Run, error: ModelError) -> bool:
        self._waiting.stop()
        return False

    def on_context_overflow(self, run: Run, error: ContextLengthExceededError) -> bool:
        self._waiting.stop()
        return False

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        self._waiting.stop()
        self._flush(run)
        # The context engine's exact count when it runs; the API's usage otherwise.
        numbers = WINDOW.get(run.state.context)
        window = numbers["usable"] if numbers else run.workflow.model.context_window
        used = numbers["used"] if numbers else (response.usage.prompt_tokens if response.usage else 0)
        tools = f"{len(response.tool_calls)} tool call(s)" if response.tool_calls else "answer"
        cached = response.usage.cached_tokens if response.usage else 0
        tools = f"{cached:,} cached · {tools}" if cached else tools
        retries = f" · {response.attempts - 1} retry(ies)" if response.attempts > 1 else ""
        self._write(
            f"  turn {run.state.turn} · tokens {used:,}/{window:,} ({used / window:.1%}) · {tools}"
            f" · {response.latency_ms / 1000:.2f}s{retries}"
        )

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        mark = "✗" if outcome.is_error else "✓"
        args = f" {outcome.call.arguments}" if self.show_payloads else ""
        size = len(outcome.content)
        self._write(f"    {mark} {outcome.call.name}{args} · {outcome.duration_ms:.0f} ms · {size:,} chars")
        self._flush(run)
        return outcome

    def on_run_end(self, run: Run) -> None:
        self._waiting.stop()
        self._flush(run)
        record = run.record
        totals = record.usage_totals()
        detail = f" · {record.stop_reason}" if record.stop_reason and self.reason else ""
        cached = totals["cached_tokens"] / totals["prompt_tokens"] if totals["prompt_tokens"] else 0.0
        cost = record.cost_usd()
        spent = f" · ~{describe(record.ledger.breakdown())}" if cost is not None else ""
        money = f" ({cached:.0%} of input cached){spent}"
        self._write(
            f"■ {record.status} · {run.state.turn} turn(s) · {len(record.tool_calls)} tool call(s)"
            f" · {totals['total_tokens']:,} tokens{money}{detail}"
        )

    def _flush(self, run: Run) -> None:
        events = run.record.events[self._seen :]
        self._seen = len(run.record.events)
        for event in events:
            line = None if isinstance(event, FileRead) else _describe(event)
            if line:
                self._write(line)
        by_call: dict[tuple[str, str, str], list[str]] = {}
        for read in (event for event in events if isinstance(event, FileRead)):  # one line per file, tool, unit
            unit = "lines" if read.lines else "bytes"
            span = read.lines or read.bytes or [0, 0]
            by_call.setdefault((read.tool, read.file, unit), []).append(f"{span[0]}-{span[1]}")
        for (tool, file_id, unit), spans in by_call.items():
            shown = ", ".join(spans[:4]) + (f" (+{len(spans) - 4} more)" if len(spans) > 4 else "")
            self._write(f"      → {tool} {file_id} {unit} {shown}")


_SAID: set[tuple[str, int, str]] = set()  # what servers said of themselves, shown once per process


def _describe(event: RunEvent) -> str | None:
    if isinstance(event, EndpointAdapted):
        return f"  ⚙ server: {event.change}"
    if isinstance(event, ServerDescribed):
        said = (event.server, event.window, event.source)
        if said in _SAID:
            return None
        _SAID.add(said)
        used = "the run's window" if event.window < event.configured else f"more than the {event.configured:,} used"
        return f"  ⚙ server: {event.server}, window {event.window:,} tokens ({event.source}): {used}"
    if isinstance(event, VirtualFile):
        return f"      → virtual file {event.file} ({event.tokens:,} tokens, {event.lines:,} lines)"
    if isinstance(event, Masking):
        return f"  ⇣ masking: {event.outputs} used output(s), {event.tokens_before:,} → {event.tokens_after:,} tokens"
    if isinstance(event, Folding):
        return f"  ⇣ folding: {event.turns} old turn(s), {event.tokens_before:,} → {event.tokens_after:,} tokens"
    if isinstance(event, Compaction):
        return (
            f"  ⇣ compaction #{event.number} ({event.tactic}, {event.trigger}): "
            f"{event.tokens_before:,} → {event.tokens_after:,} tokens · archive {event.archive_file}"
        )
    return None


class _Waiting:
    """On a terminal, what a model call is doing (waiting, reading the prompt, writing), on one line rewritten in
    place once a second (cleared after)."""

    def __init__(self, stream: TextIO, indent: str) -> None:
        self.stream, self.indent = stream, indent
        self.live = bool(getattr(stream, "isatty", lambda: False)())
        self._done: threading.Event | None = None
        self.progress: Progress | None = None  # the streamed reply so far (set from the calling thread)

    def start(self) -> None:
        if not self.live:
            return
        self.stop()
        done, started = threading.Event(), time.monotonic()
        self._done, self.progress = done, None

        def tick() -> None:
            while not done.wait(1.0):
                line = f"{_doing(self.progress)} · {time.monotonic() - started:.0f}s"
                self.stream.write(f"\r\033[K{self.indent}  … {line}")
                self.stream.flush()

        threading.Thread(target=tick, name="trace-waiting", daemon=True).start()

    def stop(self) -> None:
        if self._done is not None:
            self._done.set()
            self._done = None
            self.stream.write("\r\033[K")  # clear the line the ticker used
            self.stream.flush()


def _doing(progress: Progress | None) -> str:
    """One phrase for a streaming call's state: what the model is writing, or how far the server has read."""
    if progress is None or (progress.tokens == 0 and progress.prompt is None):
        return "waiting for the model"
    if progress.tokens == 0 and progress.prompt is not None:
        done, total = progress.prompt
        return f"the server is reading the prompt · {done:,}/{total:,} tokens"
    writing = "the answer" if progress.writing in ("", "answer") else f"a call to {inert.terminal(progress.writing)}"
    rate = progress.tokens / progress.elapsed if progress.elapsed > 0 else 0.0
    return f"writing {writing} · {progress.tokens:,} tokens ({rate:.0f}/s)"
