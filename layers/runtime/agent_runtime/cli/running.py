"""A CLI run while it works, so that a stop means the same for it as for a deployed run.

It is stored as it starts: a row of the runs index saying ``running`` and which process runs it (pid, host, the
process's start time, so a reused pid is not taken for it). ``runs stop`` from another process writes the request
its ``StopCheck`` reads; Ctrl-C asks the same stop in-process, seen at once (a model call in flight is closed, a
tool call under way finishes), and a second Ctrl-C quits there and then. A run whose process is gone without
ending it (killed, or that second Ctrl-C) reads as ``interrupted``, and ``runs stop`` closes it.
"""

from __future__ import annotations

import getpass
import os
import signal
import socket
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType, TracebackType
from typing import TYPE_CHECKING, Any

from .. import events as ev
from ..events import now_iso
from ..hooks import Hook
from ..record import RunRecord, RunStatus
from ..stopping import StopCheck, StopRequest
from ..stores import RunStore

if TYPE_CHECKING:
    from ..steps import Run

CHECK_SECONDS = 0.5  # a stop request is a local file read: seen within half a second (deployed runs: 2 s)
INTERRUPTED = "interrupted"  # how `runs list` shows a run that says running but whose process is gone
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command ended by Ctrl-C
STOPPING = "agent-runtime: Ctrl-C: stopping at the next step (a tool call under way ends first); Ctrl-C again quits"
QUIT = "agent-runtime: quit mid-step: `runs list` shows the run interrupted; its thread goes on from its last step"


@dataclass(frozen=True, slots=True)
class Process:
    pid: int
    host: str
    started: float | None  # epoch seconds; None where /proc is not there to tell

    @classmethod
    def this(cls) -> Process:
        return cls(os.getpid(), socket.gethostname(), _stat(os.getpid())[1])

    @classmethod
    def from_dict(cls, data: Any) -> Process | None:
        pid = data.get("pid") if isinstance(data, dict) else None
        if type(pid) is not int or not 0 < pid < 2**31 or not isinstance(data.get("host"), str):
            return None
        started = data.get("started")
        return cls(pid, data["host"], float(started) if isinstance(started, int | float) else None)

    def alive(self) -> bool | None:
        """False: gone (or a zombie, or its pid now another process's); None: on another host, nobody can tell."""
        if self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:  # another user's process: it exists
            pass
        state, started = _stat(self.pid)
        if state in ("Z", "X"):
            return False
        return not (self.started is not None and started is not None and abs(started - self.started) > 1.0)


def _stat(pid: int) -> tuple[str | None, float | None]:
    """A process's state letter and start time (epoch seconds), from Linux's /proc; (None, None) elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        boot = next(line for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime "))
        return fields[0], int(boot.split()[1]) + int(fields[19]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, StopIteration, ValueError):
        return None, None


class Started(Hook):
    """Stores the run's row as it starts, with this process: ``runs list`` shows it, ``runs stop`` finds it."""

    def __init__(self, runs: RunStore, thread_id: str | None) -> None:
        self.runs, self.thread_id = runs, thread_id

    def on_run_start(self, run: Run) -> None:
        self.runs.save_started(run.record, thread_id=self.thread_id, process=asdict(Process.this()))


def stop_check(runs: RunStore, run_id: str) -> StopCheck:
    """The run's stop check, as a deployed run's (``service/worker.py``), read more often: a local file."""
    return StopCheck(lambda: runs.stop_request(run_id), interval=CHECK_SECONDS)


def login() -> str:
    """Who asks, as a stop request names them: ``cli:<login>``."""
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):  # no login name for this uid (a container): still a request
        return "cli:someone"


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


def gone(row: dict[str, Any]) -> Process | None:
    """The process of a run that says running but whose process is gone (None: it works, or nobody can tell)."""
    process = Process.from_dict(row.get("process"))
    if row.get("status") != RunStatus.RUNNING or process is None:
        return None
    return process if process.alive() is False else None


def close(runs: RunStore, row: dict[str, Any], process: Process, by: str) -> None:
    """End the record of a run whose process is gone: stopped, saying so (its thread still goes on from its last
    checkpoint, as a killed turn's does)."""
    record = RunRecord(str(row["run_id"]), str(row["workflow"]), str(row.get("model") or "-"))
    record.status, record.started_at = RunStatus.STOPPED, str(row["started_at"])
    where = f"pid {process.pid} on {process.host}"
    record.stop_reason = f"Interrupted: its process ({where}) ended mid-run; closed by {by}."
    checkpoint = runs.load_checkpoint(record.run_id)
    record.event(ev.Stopped(by=by, via="cli", turn=checkpoint[0].turn if checkpoint else 0))
    record.ended_at = now_iso()
    runs.save_record(record, thread_id=row.get("thread_id"))
