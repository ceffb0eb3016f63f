"""Extension points around the loop. The context engine, persistence and tracing plug in here.

Subclass :class:`Hook` and override what you need; every method has a do-nothing default.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .messages import Message

if TYPE_CHECKING:
    from .models import ContextLengthExceededError, ModelError, ModelResponse, ToolCall
    from .models.stream import Progress
    from .steps import Run
    from .tools import ToolOutcome


class Hook:
    """No-op base: override the events you care about."""

    def on_run_start(self, run: Run) -> None:
        """Once per invocation, after the state is built or restored."""

    def before_model_call(self, run: Run, messages: list[Message]) -> list[Message]:
        """Return the messages to send (e.g. compacted, or with a status appended). Don't mutate the input."""
        return messages

    def max_output_tokens(self, run: Run, tokens: int) -> int:
        """The reply's cap for the next model call (e.g. lowered to what a small server window leaves)."""
        return tokens

    def on_model_progress(self, run: Run, progress: Progress) -> None:
        """While a streamed reply arrives: what has come so far (called per chunk, from the calling thread)."""

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        """After a successful model call, before its message joins the history."""

    def shape_reply(self, run: Run, response: ModelResponse) -> ModelResponse:
        """Return the reply as the history keeps it (e.g. a call made through a dispatcher tool as the call it stands
        for, so that approvals, journals, masking and the record see the real tool). Don't mutate the input."""
        return response

    def on_status(self, run: Run, text: str) -> None:
        """A coordinator says what it is doing (a script's ``run.progress``): for a chat's "working…" message."""

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        """Return an outcome to answer the call without running it (e.g. a replayed mutating call)."""
        return None

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        """Return the outcome to record (e.g. with a large result moved to a virtual file)."""
        return outcome

    def on_context_overflow(self, run: Run, error: ContextLengthExceededError) -> bool:
        """Shrink ``run.state.messages`` and return True to retry the call, or False to let the run fail."""
        return False

    def on_model_error(self, run: Run, error: ModelError) -> bool:
        """A model call failed for good: adapt (e.g. the request's shape) and return True to retry it once."""
        return False

    def after_step(self, run: Run) -> None:
        """After each step, when the state is consistent (a checkpoint point)."""

    def on_run_end(self, run: Run) -> None:
        """Once per invocation, whatever the outcome."""


class HookChain(Hook):
    """Runs hooks in registration order, and the closing events (``after_step``, ``on_run_end``) in reverse, as
    Strands does: hooks registered after persistence (a continuation that changes the status, a trace) act before
    it saves. Transforming hooks feed each other in registration order."""

    def __init__(self, hooks: Iterable[Hook] = ()) -> None:
        self.hooks = list(hooks)

    def on_run_start(self, run: Run) -> None:
        for hook in self.hooks:
            hook.on_run_start(run)

    def before_model_call(self, run: Run, messages: list[Message]) -> list[Message]:
        for hook in self.hooks:
            messages = hook.before_model_call(run, messages)
        return messages

    def max_output_tokens(self, run: Run, tokens: int) -> int:
        for hook in self.hooks:
            tokens = hook.max_output_tokens(run, tokens)
        return tokens

    def on_model_progress(self, run: Run, progress: Progress) -> None:
        for hook in self.hooks:
            hook.on_model_progress(run, progress)

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        for hook in self.hooks:
            hook.after_model_call(run, response)

    def shape_reply(self, run: Run, response: ModelResponse) -> ModelResponse:
        for hook in self.hooks:
            response = hook.shape_reply(run, response)
        return response

    def on_status(self, run: Run, text: str) -> None:
        for hook in self.hooks:
            hook.on_status(run, text)

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        for hook in self.hooks:
            outcome = hook.before_tool_call(run, call)
            if outcome is not None:
                return outcome
        return None

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        for hook in self.hooks:
            outcome = hook.on_tool_result(run, outcome)
        return outcome

    def on_context_overflow(self, run: Run, error: ContextLengthExceededError) -> bool:
        return any(hook.on_context_overflow(run, error) for hook in self.hooks)

    def on_model_error(self, run: Run, error: ModelError) -> bool:
        return any(hook.on_model_error(run, error) for hook in self.hooks)

    def after_step(self, run: Run) -> None:
        for hook in reversed(self.hooks):  # teardown order: the outcome is settled before persistence saves it
            hook.after_step(run)

    def on_run_end(self, run: Run) -> None:
        for hook in reversed(self.hooks):
            hook.on_run_end(run)
