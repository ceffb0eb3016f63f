"""A CLI run while it works, so that a stop means the same for it as for a deployed run.

It is stored as it starts, as a worker's run is (``stores/running.py``): a row of the runs index saying ``running``
and which process runs it (pid, host, the process's start time, so a reused pid is not taken for it). ``runs stop``
from another process writes the request its ``StopCheck`` reads; Ctrl-C asks the same stop in-process, seen at
once (a model call in flight is closed, a local sandbox's python call is ended, other tool calls finish), and a
second Ctrl-C quits there and then.
A run whose process is gone without ending it (killed, or that second Ctrl-C) reads as ``interrupted``, and
``runs stop`` closes it.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

from .. import events as ev
from ..events import now_iso
from ..record import RunRecord, RunState, RunStatus, with_earlier
from ..stopping import StopCheck, StopRequest
from ..stores.running import Process, Started, gone

__all__ = [
    "EXIT_INTERRUPTED",
    "INTERRUPTED",
    "CtrlC",
    "Process",
    "Started",
    "as_listed",
    "close",
    "cut_off",
    "gone",
    "interrupted",
    "so_far",
    "stop_check",
]

if TYPE_CHECKING:
    from ..stores import RunStore
    from ..views.rows import RunRow

CHECK_SECONDS = 0.5  # a stop request is a local file read: seen within half a second (deployed runs: 2 s)
INTERRUPTED = "interrupted"  # how `runs list` shows a run that says running but whose process is gone
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command ended by Ctrl-C
STOPPING = "agent-runtime: Ctrl-C: stopping at the next step (a tool call under way ends first); Ctrl-C again quits"
QUIT = "agent-runtime: quit mid-step: `runs list` shows the run interrupted; its thread goes on from its last step"


def stop_check(runs: RunStore, run_id: str) -> StopCheck:
    """The run's stop check, as a deployed run's (``service/worker.py``), read more often: a local file."""
    return StopCheck(lambda: runs.stop_request(run_id), interval=CHECK_SECONDS)


class CtrlC:
    """While the run works, SIGINT asks ``check`` to stop (once, at once) instead of raising ``KeyboardInterrupt``
    wherever the run is; a second one quits without unwinding (a tool call under way may not end soon)."""

    def __init__(self, check: StopCheck, by: str) -> None:
        self.check, self.by, self.pressed = check, by, 0
        self._previous: Any = None

    def __enter__(self) -> CtrlC:
        if threading.current_thread() is threading.main_thread():  # only the main thread may set a handler
            self._previous = signal.signal(signal.SIGINT, self._pressed)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._previous is not None:
            signal.signal(signal.SIGINT, self._previous)

    def stopped_it(self, record: RunRecord) -> bool:
        """Did Ctrl-C end this run (not a stop asked first from elsewhere, nor an end reached first)?"""
        found = self.check()
        return record.status is RunStatus.STOPPED and found is not None and found.via == "ctrl-c"

    def _pressed(self, signum: int, frame: FrameType | None) -> None:
        self.pressed += 1
        if self.pressed == 1:
            self.check.ask(StopRequest(self.by, time.time(), "ctrl-c"))
            _say(STOPPING)
            return
        _say(QUIT)
        os._exit(EXIT_INTERRUPTED)  # no unwinding: it would wait for the tool calls under way


def _say(line: str) -> None:
    # Straight to the descriptor: the handler may run while the trace is writing to sys.stderr's buffer.
    os.write(2, (line + "\n").encode())


def so_far(runs: RunStore, row: RunRow) -> tuple[RunRecord, RunState | None]:
    """What a run whose process ended mid-run had done by its last checkpoint: its spend and its invocation's model
    and tool calls (``stores/hook.py``), and the checkpoint itself (its words)."""
    record = RunRecord(row.run_id, row.workflow, row.model or "-")
    record.started_at = row.started_at
    checkpoint = runs.load_checkpoint(record.run_id)
    if checkpoint is not None:
        from ..stores.hook import kept_so_far  # the agent's hook (its tools: pydantic), not for every command

        kept_so_far(record, checkpoint[0])
    return record, checkpoint[0] if checkpoint else None


def cut_off(process: Process) -> str:
    return f"Interrupted: its process (pid {process.pid} on {process.host}) ended mid-run"


def close(runs: RunStore, row: RunRow, process: Process, by: str) -> None:
    """End the record of a run whose process is gone: stopped, saying so, with what it spent (its thread still
    goes on from its last checkpoint, as a killed turn's does)."""
    record, state = so_far(runs, row)
    record.status = RunStatus.STOPPED
    record.stop_reason = f"{cut_off(process)}; closed by {by}."
    record.event(ev.Stopped(by=by, via="cli", turn=state.turn if state else 0))
    record.ended_at = now_iso()
    runs.save_record(record, thread_id=row.thread_id)


def interrupted(runs: RunStore, run_id: str, earlier: dict[str, Any] | None) -> dict[str, Any] | None:
    """A run that says running but whose process is gone, as `runs list` shows it: interrupted, with what it did
    and spent by its last checkpoint, after what its earlier invocations stored (None: no such run, or one that
    ended or is at work)."""
    row = runs.summary(run_id)
    process = gone(row) if row is not None else None
    if row is None or process is None:
        return None
    record, _ = so_far(runs, row)
    record.stop_reason = f"{cut_off(process)}; `runs stop {run_id}` closes it as stopped"
    return with_earlier(earlier, record.to_dict()) | {"status": INTERRUPTED}


def as_listed(runs: RunStore, row: RunRow) -> RunRow:
    """A row as `runs list` shows it: one whose process is gone is interrupted, with the calls, tokens and cost
    its record will have when `runs stop` closes it (`runs show` shows the same)."""
    found = interrupted(runs, row.run_id, runs.load_record(row.run_id, feedback=False)) if gone(row) else None
    if found is None:
        return row
    cost, calls, tools = found["cost_usd"], found["model_calls"], found["tool_calls"]
    return dataclasses.replace(
        row,
        status=INTERRUPTED,
        model_calls=len(calls),
        tool_calls=len(tools),
        tokens=found["usage"]["total_tokens"],
        cost_usd=cost,
        cost=found["cost"],
    )
