"""The context engine: a hook around every model call that keeps the window exact, small and valid.

* counts every request exactly (tiktoken, per-message cache) and reconciles with the API's ``usage``;
* appends a status message at the tail (never stored, so the persisted prefix stays byte-stable for caching);
* moves oversized user messages and tool results into virtual files, leaving a preview;
* compacts when the window passes the threshold (see ``compaction.py``);
* refuses to send a history with an orphaned tool call or result.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from .. import messages as msgs
from ..files import FileMeta
from ..hooks import Hook
from ..messages import Message
from ..tools import ToolOutcome, ToolRegistry
from .compaction import CompactionError, Compactor, Plan, SummaryMemo, load_custom
from .counter import TokenCounter
from .history import VIRTUAL_MARK, check_history
from .ledger import STATUS_RESERVE, RunLedger
from .status import WindowNumbers, render_status
from .tally import WindowTally
from .virtual import offload

if TYPE_CHECKING:
    from ..loop import Run
    from ..models import ContextLengthExceededError, Model, ModelResponse
    from ..workflows import Workflow

MASK_TARGET = 0.6  # masking alone must bring the window to this fraction of the threshold to be enough


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
        self.counter = counter or TokenCounter(workflow.model.name)
        self.tools_tokens = self.counter.tools(tools.specs())
        self.keep_inline = {tool.name for tool in tools if not tool.offload}
        window = min(workflow.model.context_window, self.settings.context_budget or math.inf)
        self.window = int(window)
        self.usable = self.window - workflow.model.max_output_tokens
        self.compaction_at = int(self.usable * self.settings.compaction_threshold)
        self.tally = WindowTally(self.counter)
        custom, instructions = load_custom(self.settings.compactor, workflow.path.parent if workflow.path else None)
        self.compactor = Compactor(
            self.counter,
            ratio=self.settings.compaction_ratio,
            mutating={tool.name for tool in tools if tool.mutating},
            pinned={tool.name for tool in tools if tool.pinned},
            model=model,
            max_summary_tokens=min(workflow.model.max_output_tokens, 4096),
            custom=custom,
            instructions=instructions,
            memo=memo,
        )

    def ledger(self, run: Run) -> RunLedger:
        return cast(RunLedger, run.context.ledger)

    def on_run_start(self, run: Run) -> None:
        self.tally.reset()
        run.context.ledger = RunLedger(run, self.counter, usable_tokens=self.usable, used=lambda: self.used(run))
        last = run.state.messages[-1]
        if last["role"] == "user":
            run.state.messages[-1] = msgs.user(self._maybe_offload(run, msgs.text_of(last), "user message", "user"))
        problems = msgs.find_orphans(run.state.messages, allow_pending=True)
        check_history(run.state.messages, where="restoring the run", problems=problems)

    def measure(self, messages: list[Message]) -> int:
        """Tokens of a request made of ``messages``, with room for the status message."""
        return self.counter.messages(messages) + self.tools_tokens + STATUS_RESERVE

    def used(self, run: Run) -> int:
        """Tokens of the history as it stands (O(new messages) per call)."""
        return self.tally.update(run.state.messages).tokens + self.tools_tokens

    def before_model_call(self, run: Run, messages: list[Message]) -> list[Message]:
        tally = self.tally.update(messages)
        check_history(messages, where="preparing the request", problems=tally.check.result())
        if self.settings.mask_threshold_tokens:  # the cheap tactic first: it may make compaction unnecessary
            messages = self._rolling_mask(run, messages)
        if self.tally.update(messages).tokens + self.tools_tokens + STATUS_RESERVE > self.compaction_at:
            self._compact(run, "threshold")
            messages = list(run.state.messages)
        used = self.tally.update(messages).tokens + self.tools_tokens
        split = {"system": self.tally.split["system"], "tools": self.tools_tokens}
        split |= {key: value for key, value in self.tally.split.items() if key != "system"}
        files = self._files(run)
        status = self._status(run, used, split, files)
        # The status reports the whole request, itself included: render again with its own size added
        # (twice at most: a digit more can change its size by a token).
        for _ in range(2):
            total = used + self.counter.message(status)
            status = self._status(run, total, split, files)
        total = used + self.counter.message(status)
        run.state.context["window"] = {"turn": run.state.turn, "used": total, "usable": self.usable}
        return [*messages, status]

    def _rolling_mask(self, run: Run, messages: list[Message]) -> list[Message]:
        """Mask used outputs in one batch once they add up to ``mask_threshold_tokens``: one cache miss
        buys a smaller prefix on every later turn."""
        found = self.compactor.maskable(messages)
        if sum(self.counter.message(messages[i]) for i, _ in found) < self.settings.mask_threshold_tokens:
            return messages
        before = self.measure(messages)
        masked = self.compactor.mask(run, messages, enough=lambda _: False)
        check_history(masked, where="masking")
        run.state.messages[:] = masked
        self.tally.reset()
        after = self.measure(masked)
        run.record.event("masking", turn=run.state.turn, outputs=len(found), tokens_before=before, tokens_after=after)
        return list(masked)

    def on_context_overflow(self, run: Run, error: ContextLengthExceededError) -> bool:
        """The API disagrees with our count: compact harder than the threshold would, then retry once."""
        self._compact(run, "overflow")
        return True

    def _compact(self, run: Run, trigger: str) -> None:
        turn = run.state.turn
        if trigger == "threshold" and run.state.context.get("compacted_turn") == turn:
            raise CompactionError(f"the window passed the threshold again in turn {turn}, right after compacting")
        before = self.measure(run.state.messages)
        if trigger == "overflow":
            plan = Plan(self.measure, target=before // 2, limit=int(before * 0.75), trigger=trigger)
        else:
            target = int(self.compaction_at * MASK_TARGET)
            plan = Plan(self.measure, target=target, limit=self.compaction_at, trigger=trigger)
        event = self.compactor.compact(run, plan)
        self.tally.reset()
        run.state.context["compacted_turn"] = turn
        run.record.event("compaction", turn=turn, **event)

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        if response.usage is None or not run.record.model_calls:
            return
        estimated = run.state.context["window"]["used"]
        run.record.model_calls[-1]["context"] = {
            "estimated_prompt_tokens": estimated,
            "drift": response.usage.prompt_tokens - estimated,
        }

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        if outcome.call.name in self.keep_inline or outcome.is_error:
            return outcome
        content = self._maybe_offload(run, outcome.content, f"result of {outcome.call.name}", outcome.call.name)
        if content is outcome.content:
            return outcome
        return ToolOutcome(outcome.call, content, outcome.is_error, outcome.mutating, outcome.duration_ms)

    def _maybe_offload(self, run: Run, text: str, label: str, stem: str) -> str:
        threshold = self.settings.virtual_file_threshold_tokens
        if len(text.encode("utf-8")) <= threshold or text.startswith(VIRTUAL_MARK):
            return text  # a token is at least one byte: no need to count
        tokens = self.counter.text(text)
        if tokens <= threshold:
            return text
        name = f"{stem}-turn{run.state.turn}-{len(run.state.messages)}.txt"
        result = offload(
            text,
            store=run.context.files,
            counter=self.counter,
            name=name,
            label=label,
            preview_tokens=self.settings.virtual_file_preview_tokens,
            tokens=tokens,
        )
        ledger = self.ledger(run)
        entry = ledger.file_state(result.meta)
        entry["read_lines"] = [[1, result.preview_lines]] if result.preview_lines else []
        run.record.event("virtual_file", file=result.meta.id, tokens=tokens, lines=result.lines, source=stem)
        run.record.files.append(result.meta.to_dict())
        return result.inline

    def _files(self, run: Run) -> list[tuple[FileMeta, dict[str, Any]]]:
        ledger = self.ledger(run)
        return [(meta, ledger.file_state(meta)) for meta in run.context.files.list()]

    def _status(
        self, run: Run, used: int, split: dict[str, int], files: list[tuple[FileMeta, dict[str, Any]]]
    ) -> Message:
        numbers = WindowNumbers(
            turn=run.state.turn,
            used=used,
            usable=self.usable,
            window=self.window,
            output_reserve=self.workflow.model.max_output_tokens,
            compaction_at=self.compaction_at,
            compactions=len(run.state.context.get("compactions", [])),
            split=split,
        )
        text = render_status(numbers, files)
        return {"role": "system", "content": text} if self.settings.status_role == "system" else msgs.user(text)
