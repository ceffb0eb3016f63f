"""The "working…" message: updated as the run goes (step, tools, tokens), replaced by the answer at the end."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..events import ProgressUpdateFailed
from ..hooks import Hook
from ..models.reasoning import VisibleStream, visible
from ..record import RunStatus

if TYPE_CHECKING:
    from ..messages import Message
    from ..models import ModelResponse, ToolCall
    from ..models.stream import Progress
    from ..steps import Run
    from ..tools import ToolOutcome


TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,64}")  # what a function name may be (OpenAI's rule, and MCP's dots)


def tool_label(name: str) -> str:
    """A tool's name as a chat shows it: one line, never a model's invention of 60,000 characters."""
    return name if TOOL_NAME.fullmatch(name) else "an unknown tool"


STATUS_CHARS = 200  # of a script's progress line


class ProgressHook(Hook):
    """Calls ``show(text)`` after steps, at most every ``interval`` seconds (Slack allows ~1 update/s/channel)."""

    def __init__(self, show: Callable[[str], None], *, workflow: str, interval: float = 3.0) -> None:
        self.show, self.workflow, self.interval = show, workflow, interval
        self._last = 0.0
        self._tools: list[str] = []

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        self._tools.append(tool_label(call.name))
        return None

    def after_step(self, run: Run) -> None:
        tokens = run.record.usage_totals()["total_tokens"]
        tools = ", ".join(dict.fromkeys(self._tools[-3:])) or "thinking"
        if self._update(run, f"{tools} · {tokens:,} tokens"):
            self._tools.clear()

    def on_model_progress(self, run: Run, progress: Progress) -> None:
        """While a slow model writes (a local server on CPU): what it writes, so the thread sees it move."""
        if progress.tokens:
            writing = "the answer" if progress.writing in ("", "answer") else f"a call to {progress.writing}"
            self._update(run, f"writing {writing} ({progress.tokens:,} tokens so far)")

    def on_status(self, run: Run, text: str) -> None:
        """A script's own words: shown unless one was shown within the second (Slack's pace for updates)."""
        self._update(run, " ".join(text.split())[:STATUS_CHARS], interval=min(self.interval, 1.0))

    def _update(self, run: Run, doing: str, *, interval: float | None = None) -> bool:
        now = time.monotonic()
        if now - self._last < (self.interval if interval is None else interval):
            return False
        self._last = now
        try:
            self.show(f":hourglass_flowing_sand: Working on it ({self.workflow}) · step {run.state.turn} · {doing}")
        except Exception:  # progress is cosmetic: a failed update must not fail the run
            run.record.event(ProgressUpdateFailed())
        return True


class AnswerStreamHook(Hook):
    """Feeds a chat's answer stream: the model's text as it is written, each tool call as a task card. Only the
    text that counts stays: a failed attempt's goes when the next attempt writes, an unfinished call's at the end."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream  # a chat.stream.AnswerStream (new_call/text/discard/settle/task/close)
        self._attempt = 0  # the attempt of the current model call whose text streams
        self._words = VisibleStream()  # its words: a reasoning block that opens the reply is not shown

    def before_model_call(self, run: Run, messages: list[Message]) -> list[Message]:
        self.stream.new_call()  # its text is set apart from what earlier calls said
        self._attempt, self._words = 0, VisibleStream()
        return messages

    def on_model_progress(self, run: Run, progress: Progress) -> None:
        if progress.attempt != self._attempt:  # a retry: what the failed attempt wrote never counted
            self.stream.discard()
            self._attempt, self._words = progress.attempt, VisibleStream()
        if progress.delta:
            self.stream.text(self._words.feed(progress.delta))

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        self.stream.settle(visible(response.text or ""))

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        self.stream.task(call.id, tool_label(call.name), "in_progress")
        return None

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        self.stream.task(outcome.call.id, tool_label(outcome.call.name), "error" if outcome.is_error else "complete")
        return outcome

    def on_run_end(self, run: Run) -> None:
        self.stream.discard()  # a call the deadline, a stop or a failure cut short said nothing that counts
        if run.record.status in (RunStatus.SUSPENDED, RunStatus.AWAITING_APPROVAL):
            self.stream.close()  # another invocation answers: what counted so far stays
