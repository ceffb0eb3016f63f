"""A run's row while it works: saying ``running`` and which process runs it (pid, host, the process's start time, so
a reused pid is not taken for it), stored as the run starts — a CLI run's (``cli/running.py``) and a worker's
(``service/turn.py``) alike. ``runs list`` shows a run whose process is gone without ending it as ``interrupted``;
``runs stop`` closes it, and ``agent-runtime serve`` resumes its worker's (``service/resumed.py``).
"""

from __future__ import annotations

import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hooks import Hook
from ..record import RunRecord, RunStatus

if TYPE_CHECKING:
    from ..steps import Run
    from ..views.rows import RunRow
    from .runs import RunStore


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
    """Stores the run's row as it starts, with this process: ``runs list`` shows it, ``runs stop`` finds it.

    A row that still says running when the run starts again is an invocation cut off before it ended (serve
    stopped, a Lambda timeout): it saved no record, so the run's record would begin at this invocation. It is
    recorded first, as what is known of it — its start, and its calls and spend by its last checkpoint — so the
    run keeps its first start and what it spent, counts both invocations, and its duration runs from that start,
    as a run resumed after an approval's does (``record.merged_invocations``, ``views/run.py``)."""

    def __init__(self, runs: RunStore, thread_id: str | None) -> None:
        self.runs, self.thread_id = runs, thread_id

    def on_run_start(self, run: Run) -> None:
        record = run.record
        earlier = self.runs.summary(record.run_id)
        if earlier is not None and earlier.status == RunStatus.RUNNING and earlier.started_at != record.started_at:
            cut = RunRecord(record.run_id, record.workflow, earlier.model or record.model)
            cut.started_at = earlier.started_at or record.started_at
            from .hook import kept_so_far  # the agent's (its tools, pydantic): the worker's init leaves it to the run

            kept_so_far(cut, run.state)  # what it spent by its last checkpoint, the state this one resumes
            self.runs.save_record(cut, thread_id=self.thread_id)
        self.runs.save_started(record, thread_id=self.thread_id, process=asdict(Process.this()))


def gone(row: RunRow) -> Process | None:
    """The process of a run that says running but whose process is gone (None: it works, or nobody can tell)."""
    process = Process.from_dict(row.process)
    if row.status != RunStatus.RUNNING or process is None:
        return None
    return process if process.alive() is False else None
