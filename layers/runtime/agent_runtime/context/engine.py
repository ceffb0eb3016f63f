"""The context engine: a hook around every model call that keeps the window exact, small and valid.

* counts every request exactly (tiktoken, per-message cache), calibrated by what the server reports;
* appends a status message at the tail (never stored, so the persisted prefix stays byte-stable for caching);
* moves oversized user messages and tool results into virtual files, leaving a preview;
* compacts when the window passes the threshold (``compaction.py``, then the ladder in ``ladder.py``);
* refuses to send a history with an orphaned tool call or result.

The invariant: whatever the window, the thresholds, the sizes and the tokenizer drift, a run never fails for
context reasons and never sends a request over the window by its calibrated count.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from .. import messages as msgs
from ..errors import ConfigError
from ..events import Calibrated, Compaction, ServerDescribed, StatusRoleFallback
from ..files import EXTRACTED, FileMeta
from ..hooks import Hook
from ..messages import Message
from ..models.base import DescribedModel
from ..models.exceptions import TEMPLATE_REFUSAL
from ..state import Slot
from ..tools import ToolOutcome, ToolRegistry
from .budget import WINDOW, Calibration, Window
from .cache import Prefix, cached_ratio, horizon
from .compaction import COMPACTIONS, Compactor, Plan, SummaryMemo, load_custom
from .counter import TokenCounter
from .encodings import load_encoding
from .history import VIRTUAL_MARK, check_history
from .identifiers import identifiers_in
from .ladder import naming
from .ledger import STATUS_RESERVE, RunLedger
from .rolling import Pricing, RollingMask
from .status import WindowNumbers, file_rows, render_status
from .tally import WindowTally
from .virtual import kept_aside

if TYPE_CHECKING:
    from ..models import ContextLengthExceededError, Model, ModelError, ModelResponse, ToolCall
    from ..steps import Run
    from ..workflows import Workflow

MASK_TARGET = 0.6  # masking alone must bring the window to this fraction of the threshold to be enough
MIN_ROOM = 256  # tokens the conversation needs beside the system prompt and the tools, at the very least
MIN_REPLY_TOKENS = 128  # the smallest cap a reply gets when a tight window's request passes its input budget
STATUS_MARGIN = 32  # tokens kept beyond the last status's size (a digit more, a file more)
# "user" once a server's chat template refused a late system message (None: the workflow's setting)
STATUS_ROLE: Slot[str | None] = Slot("status_role", lambda: None, owner=__name__)
MAX_SUMMARY_TOKENS = 4_096
SUMMARY_PROMPT_RESERVE = 1_200  # the summary call's instructions (a workflow may add its own) and framing


class ContextEngine(Hook):
    """Plug into :class:`~agent_runtime.loop.Agent` as a hook (the runtime does this for every workflow)."""

    def __init__(
        self,
        workflow: Workflow,
        tools: ToolRegistry,
        *,
        model: Model | None = None,
        counter: TokenCounter | None = None,
        memo: SummaryMemo | None = None,
    ) -> None:
        self.workflow = workflow
        self.settings = workflow.context
        tokenizer = workflow.model.tokenizer
        self.counter = counter or TokenCounter(
            workflow.model.name, encoding=load_encoding(tokenizer) if tokenizer else None
        )
        self.model = model
        self.tools = tools
        self.tool_specs = tools.specs()
        self.raw_tools_tokens = self.counter.tools(self.tool_specs)
        self.on_compacted: list[Callable[[Run], None]] = []  # e.g. found tools joining the list (toolsearch)
        self.keep_inline = {tool.name for tool in tools if not tool.offload}
        configured = int(min(workflow.model.context_window, self.settings.context_budget or math.inf))
        self.limits = Window(configured, workflow.model.max_output_tokens, self.settings.compaction_threshold)
        self.calibration = Calibration()
        self.calibration_key = _endpoint_key(model)
        self.status_reserve = STATUS_RESERVE
        self.in_flight = 0  # tool calls of the current batch not yet answered
        self.squeezed: int | None = None  # this request's smaller reply cap, when it passes the input budget
        self._split: dict[str, int] = {}  # the last request's tokens by part (system, tools, history, ...)
        self.tally = WindowTally(self.counter)
        self.prefix = Prefix(self.counter)  # what the previous request had: the server's cache
        self._cached: int | None = None  # tokens of this request the server's cache should have
        custom, instructions = load_custom(self.settings.compactor, workflow.path.parent if workflow.path else None)
        self.compactor = Compactor(
            self.counter,
            ratio=self.settings.compaction_ratio,
            mutating={tool.name for tool in tools if tool.mutating},
            kept={tool.name for tool in tools if not tool.maskable},
            pinned={tool.name for tool in tools if tool.pinned},
            model=model,
            max_summary_tokens=min(workflow.model.max_output_tokens, MAX_SUMMARY_TOKENS),
            custom=custom,
            instructions=instructions,
            memo=memo,
        )
        self.rolling = RollingMask(
            self.counter, self.compactor, threshold=self.settings.mask_threshold_tokens, prefix=self.prefix
        )

    # The window's numbers: the configured window, or the server's when it said it is smaller.
    @property
    def _window(self) -> Window:
        return self.limits.for_server(self.calibration.server_window)

    @property
    def window(self) -> int:
        return self._window.window

    @property
    def usable(self) -> int:
        return self._window.usable

    @property
    def compaction_at(self) -> int:
        return self._window.compaction_at

    @property
    def output_reserve(self) -> int:
        return self._window.output_reserve

    @property
    def tools_tokens(self) -> int:
        return self.calibration.scaled(self.raw_tools_tokens)

    def ledger(self, run: Run) -> RunLedger:
        return cast(RunLedger, run.context.ledger)

    def on_run_start(self, run: Run) -> None:
        self.tally.reset()
        self.calibration = Calibration.restore(run.state.context, self.calibration_key)
        self.status_reserve = STATUS_RESERVE
        self.in_flight = 0
        run.context.ledger = RunLedger(
            run, self.counter, remaining=lambda: self.read_budget(run), scale=lambda: self.calibration.scale
        )
        self.tally.update(run.state.messages)
        self.prefix.restore(run.state.messages)
        self.rolling.reset()
        self._learn_server(run)
        last = run.state.messages[-1]
        if last["role"] == "user" and isinstance(last.get("content"), str):
            run.state.messages[-1] = msgs.user(self._maybe_offload(run, msgs.text_of(last), "user message", "user"))
        self._count_at_server(run)
        self._check_room()
        problems = msgs.find_orphans(run.state.messages, allow_pending=True)
        check_history(run.state.messages, where="restoring the run", problems=problems)

    def _learn_server(self, run: Run) -> None:
        """The server's own window, asked before the first request (once per process): the smaller of it and
        the workflow's is the window, with an output reserve that fits it."""
        if not isinstance(self.model, DescribedModel):
            return
        info = self.model.describe()
        if info.window:
            run.record.event(
                ServerDescribed(server=info.kind, window=info.window, source=info.source, configured=self.limits.window)
            )
        if info.window and info.window < (self.calibration.server_window or self.limits.window):
            self.calibration.server_window = info.window
            self.calibration.save(run.state.context, self.calibration_key)

    def _count_at_server(self, run: Run) -> None:
        """The first request counted by the server itself (its tokenizer, its chat template), once per endpoint
        and model: every budget is then in its tokens from the first request, the start-up check included."""
        if self.calibration.counted or not isinstance(self.model, DescribedModel):
            return
        counted = self.model.count_tokens(run.state.messages, self.tool_specs)
        if not counted:
            return
        estimated = self.tally.update(run.state.messages).tokens + self.raw_tools_tokens
        self.calibration.counted = True
        if self.calibration.learn_usage(estimated, counted, exact=True):
            run.record.event(Calibrated(trigger="server_count", scale=round(self.calibration.scale, 3)))
        self.calibration.save(run.state.context, self.calibration_key)

    def _check_room(self) -> None:
        """A window that cannot hold the system prompt and the tools with room to talk is a configuration error,
        said before anything is sent, not a failure halfway through a run. (Past the compaction threshold is
        allowed: compaction may end above it, never above the window.)"""
        if self.baseline() + MIN_ROOM > self.usable:
            server = f" (the server's window is {self.window:,})" if self.calibration.server_window else ""
            raise ConfigError(
                f"the context window is too small for this workflow: the system prompt and tool definitions take "
                f"about {self.baseline():,} tokens and a request may take {self.usable:,}{server} "
                f"(model.context_window / context.context_budget minus the output reserve, "
                f"{self.output_reserve:,}). Raise context.context_budget or use a model with a larger window."
            )

    def max_output_tokens(self, run: Run, tokens: int) -> int:
        """The reply's cap: the workflow's, or the reserve a smaller server window leaves, or (when the request
        still passes the input budget) what the window leaves of it."""
        return min(tokens, self.output_reserve, self.squeezed or tokens)

    # Sizes
    def baseline(self) -> int:
        """What no compaction can shrink: the leading system messages, the tools and the status."""
        return self.calibration.scaled(self.tally.split["system"]) + self.tools_tokens + self.status_reserve

    def room(self) -> int:
        """What a compacted window (compaction's target) leaves for the conversation beside the baseline."""
        return int(self.compaction_at * MASK_TARGET) - self.baseline()

    def offload_threshold(self) -> int:
        """``virtual_file_threshold_tokens``, or half the room the window leaves when that is smaller: a fixed
        10,000 makes no sense in an 8k window."""
        return max(2 * self.preview_cap(), min(self.settings.virtual_file_threshold_tokens, self.room() // 2))

    def preview_cap(self) -> int:
        return max(50, min(self.settings.virtual_file_preview_tokens, self.room() // 8))

    def summary_input(self) -> int:
        """The summary call must fit the window too: its transcript gets what its answer and prompt leave."""
        self.compactor.max_summary_tokens = min(self.output_reserve, MAX_SUMMARY_TOKENS)  # the window may shrink
        room = self.window - self.compactor.max_summary_tokens - SUMMARY_PROMPT_RESERVE
        return max(0, int(room / self.calibration.scale))

    def measure(self, messages: list[Message]) -> int:
        """Tokens of a request made of ``messages``, with room for the status message."""
        return self.calibration.scaled(self.counter.messages(messages) + self.raw_tools_tokens) + self.status_reserve

    def _measure_history(self, messages: list[Message]) -> int:
        """:meth:`measure` of the history (or a copy of it) from the running tally: O(new messages)."""
        return self.calibration.scaled(self.tally.update(messages).tokens + self.raw_tools_tokens) + self.status_reserve

    def used(self, run: Run) -> int:
        """Tokens of the history as it stands (O(new messages) per call)."""
        return self.calibration.scaled(self.tally.update(run.state.messages).tokens + self.raw_tools_tokens)

    def read_budget(self, run: Run) -> int:
        """What one read may add: the room before the compaction point, and never less than a share of what a
        compacted window leaves (so the model can always make progress: the next compaction masks older outputs,
        and the ladder offloads what still does not fit)."""
        room = self.compaction_at - self.used(run) - self.status_reserve
        floor = self.room() // 2
        small_window_floor = (self.usable - self.baseline()) // 3  # compaction may end over the threshold there
        return max(0, room, floor, small_window_floor) // max(1, self.in_flight)  # parallel calls share it

    # The request
    def _follow(self) -> None:
        """The tools the registry sends now: a tool may join the list (a found one, at a compaction)."""
        if len(specs := self.tools.specs()) != len(self.tool_specs):
            self.tool_specs, self.raw_tools_tokens = specs, self.counter.tools(specs)

    def before_model_call(self, run: Run, messages: list[Message]) -> list[Message]:
        self._follow()
        tally = self.tally.update(messages)
        check_history(messages, where="preparing the request", problems=tally.check.result())
        self.prefix.check(messages)
        if self.settings.mask_threshold_tokens:  # the cheap tactic first: it may make compaction unnecessary
            rolled = self.rolling.apply(run, messages, self._pricing(run), self.measure)
            if rolled is not messages:  # rewritten in the middle: the running tally starts again
                self.tally.reset()
            messages = rolled
        trigger, self.squeezed = "threshold", None
        for _ in range(3):
            if self._measure_history(messages) > self.compaction_at:
                self._compact(run, trigger)
                messages = list(run.state.messages)
            status, total = self._with_status(run, messages)
            fits = total <= self.usable
            # the reserve follows the status's real size (a small window needs the 400 tokens of a first guess)
            self.status_reserve = self.calibration.scaled(self.counter.message(status)) + STATUS_MARGIN
            if fits:
                return self._sending(messages, status)
            trigger = "window"  # the status outgrew its reserve (many files): compact again with its real size
        # The last rung, in a tight window only: the reply's cap gives way (never below MIN_REPLY_TOKENS).
        self.squeezed = max(MIN_REPLY_TOKENS, self.window - total)
        return self._sending(messages, status)

    def _sending(self, messages: list[Message], status: Message) -> list[Message]:
        """The request, noting how much of it the previous one had (the prefix a server's cache can serve)."""
        shared = self.prefix.sending(messages)
        fresh = sum(self.counter.message(message) for message in messages[shared:])
        self._cached = self.tally.update(messages).tokens - fresh + self.raw_tools_tokens  # tiktoken's count
        return _placed(messages, status)

    def _pricing(self, run: Run) -> Pricing:
        limit = self.workflow.limits.max_tool_calls
        left = None if limit is None else max(0, limit - run.state.tool_calls_used)
        return Pricing(cached_ratio(run.record.prices), horizon(run.state.turn, left))

    def _with_status(self, run: Run, messages: list[Message]) -> tuple[Message, int]:
        raw = self.tally.update(messages).tokens + self.raw_tools_tokens
        used = self.calibration.scaled(raw)
        split = {"system": self.tally.split["system"], "tools": self.raw_tools_tokens}
        split |= {key: value for key, value in self.tally.split.items() if key != "system"}
        split = {key: self.calibration.scaled(value) for key, value in split.items()}
        self._split = split
        files = file_rows(run.context.files, self.ledger(run), EXTRACTED.get(run.state.context))
        status = self._status(run, used, split, files)
        # The status reports the whole request, itself included: render again with its own size added
        # (twice at most: a digit more can change its size by a token).
        for _ in range(2):
            status = self._status(run, used + self.calibration.scaled(self.counter.message(status)), split, files)
        status_tokens = self.counter.message(status)
        total = self.calibration.scaled(raw + status_tokens)
        WINDOW.set(
            run.state.context,
            {"turn": run.state.turn, "used": total, "usable": self.usable, "estimated": raw + status_tokens},
        )
        return status, total

    def on_model_error(self, run: Run, error: ModelError) -> bool:
        """A chat template that refuses a system message after the first (Qwen's, Mistral's) gets the status as
        a user message from then on, for the rest of the run and its thread."""
        if self._status_role(run) == "user" or not TEMPLATE_REFUSAL.search(str(error)):
            return False
        STATUS_ROLE.set(run.state.context, "user")
        run.record.event(StatusRoleFallback(status_code=error.status_code))
        return True

    def _status_role(self, run: Run) -> str:
        return STATUS_ROLE.get(run.state.context) or self.settings.status_role

    def on_context_overflow(self, run: Run, error: ContextLengthExceededError) -> bool:
        """The server counted more than we did: learn its numbers (or assume a quarter more), then compact so
        the retried request fits with room to spare."""
        window = WINDOW.get(run.state.context)
        estimated = window["estimated"] if window else None
        learned = self.calibration.learn_overflow(estimated, error.prompt_tokens, error.window, self.limits.window)
        self.calibration.save(run.state.context, self.calibration_key)
        run.record.event(Calibrated(trigger="overflow", **learned))
        self._compact(run, "overflow")
        return True

    def _compact(self, run: Run, trigger: str) -> None:
        self.rolling.reset()  # compaction rewrites the history: the rolling mask scans it again
        turn = run.state.turn
        old = list(run.state.messages)
        before = self.measure(run.state.messages)
        target = int(self.compaction_at * MASK_TARGET)
        limit = self.compaction_at
        if trigger == "overflow":  # the window was over at the server: aim well under the threshold
            target, limit = min(target, before // 2), min(limit, int(before * 0.75))
        plan = Plan(
            self.measure,
            target=target,
            limit=limit,
            trigger=trigger,
            offload=lambda text, label, stem, preview: self._offload(run, text, label, stem, preview),
            preview_tokens=self.preview_cap(),
            summary_input=self.summary_input(),
            hard_limit=self.usable,
            absolute=self.window - MIN_REPLY_TOKENS,
        )
        event = self.compactor.compact(run, plan)
        for listener in self.on_compacted:  # before anything is measured again
            listener(run)
        self._follow()
        self.tally.reset()
        new = run.state.messages
        self.prefix.changed(
            new,
            next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a is not b), min(len(old), len(new))),
        )
        core = ("number", "trigger", "tactic", "tokens_before", "tokens_after", "archive_file")
        details = {key: value for key, value in event.items() if key not in core}
        run.record.event(Compaction(turn=turn, **{key: event[key] for key in core}, extra=details))

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        if not run.record.model_calls:
            return
        # What the request was made of (the run's chart draws these), then how the server's count compared.
        context = {"split": dict(self._split), "usable": self.usable, "compaction_at": self.compaction_at}
        run.record.model_calls[-1]["context"] = context
        window = WINDOW.get(run.state.context)
        if response.usage is None or window is None:
            return
        # The prompt cache: what the engine kept byte-stable for it, and what the server says it served.
        usage = response.usage
        share = round(usage.cached_tokens / usage.prompt_tokens, 4) if usage.prompt_tokens else 0.0
        context["cache"] = {"prefix_tokens": self._cached, "cached_tokens": usage.cached_tokens, "cached_share": share}
        estimated = window["used"]
        context |= {"estimated_prompt_tokens": estimated, "drift": response.usage.prompt_tokens - estimated}
        if self.calibration.learn_usage(window["estimated"], response.usage.prompt_tokens):
            self.calibration.save(run.state.context, self.calibration_key)
            run.record.event(Calibrated(trigger="usage", scale=round(self.calibration.scale, 3)))

    # Virtual files
    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        self.in_flight += 1  # the loop announces a whole batch before running it: its calls share the budget
        return None

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        self.in_flight = max(0, self.in_flight - 1)
        if outcome.call.name in self.keep_inline or outcome.is_error:
            return outcome
        content = self._maybe_offload(run, outcome.content, f"result of {outcome.call.name}", outcome.call.name)
        if content is outcome.content:
            return outcome
        return ToolOutcome(outcome.call, content, outcome.is_error, outcome.mutating, outcome.duration_ms)

    def _maybe_offload(self, run: Run, text: str, label: str, stem: str) -> str:
        threshold = self.offload_threshold()
        if len(text.encode("utf-8")) * self.calibration.scale <= threshold or text.startswith(VIRTUAL_MARK):
            return text  # a token is at least one byte: no need to count
        tokens = self.calibration.scaled(self.counter.text(text))
        if tokens <= threshold:
            return text
        inline = self._offload(run, text, label, stem, self.preview_cap(), tokens=tokens)
        return naming(inline, identifiers_in(text)) if stem == "user" else inline  # the user's keys stay in view

    def _offload(self, run: Run, text: str, label: str, stem: str, preview: int, *, tokens: int | None = None) -> str:
        tokens = tokens if tokens is not None else self.calibration.scaled(self.counter.text(text))
        preview_tokens = int(preview / self.calibration.scale)
        return kept_aside(run, self.ledger(run), self.counter, text, label, stem, preview_tokens, tokens)

    def _status(
        self, run: Run, used: int, split: dict[str, int], files: list[tuple[FileMeta, dict[str, Any]]]
    ) -> Message:
        numbers = WindowNumbers(
            turn=run.state.turn,
            used=used,
            usable=self.usable,
            output_reserve=self.output_reserve,
            compaction_at=self.compaction_at,
            compactions=len(COMPACTIONS.get(run.state.context)),
            split=split,
            tool_calls_used=run.state.tool_calls_used,
            tool_calls_limit=self.workflow.limits.max_tool_calls,
            scale=self.calibration.scale,
            max_files=max(3, self.usable // 800),  # ~40 tokens a row: at most ~5 % of the window
        )
        text = render_status(numbers, files)
        return {"role": "system", "content": text} if self._status_role(run) == "system" else msgs.user(text)


def _placed(messages: list[Message], status: Message) -> list[Message]:
    """The request: the history and the status at its tail, a user status joined to a last user message (two
    user messages in a row fail templates that want alternating roles)."""
    return msgs.with_user_text(messages, msgs.text_of(status)) if status["role"] == "user" else [*messages, status]


def _endpoint_key(model: Model | None) -> str | None:
    """Which server and model a calibration belongs to (None: not known, so not shared across runs)."""
    endpoint = getattr(model, "endpoint", None)
    return None if model is None or endpoint is None else f"{model.name}@{endpoint}"
