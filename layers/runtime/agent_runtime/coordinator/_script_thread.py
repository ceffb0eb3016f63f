"""A coordinator script runs in a thread of its own while the run's thread does its steps.

The script asks for a step (a tool call, a model's answer, a progress line) and waits; the run's thread takes each
request, runs it, and between requests watches the run's deadline and stop. So the script's own code — a loop, a
slow computation — is bounded by the run as a Python tool is: at the deadline or a stop the run ends there and the
script is abandoned (an exception is raised in its thread: a pure-Python loop ends at once, a blocking call when it
returns), and nothing it does after that reaches the run: the run's state is only ever touched by the run's thread.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import queue
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

RUNTIME = Path(__file__).resolve().parent  # frames of the runtime's own files are never "where the script was"
STDLIB = Path(threading.__file__).resolve().parent
POLL_SECONDS = 0.2  # how often the run's thread looks at the deadline and the stop while the script computes


class Abandoned(BaseException):
    """Raised in an abandoned script's thread (the run ended): a BaseException, so that ``except Exception`` in the
    script does not keep it going."""


@dataclass(frozen=True, slots=True)
class Request:
    """A step the script asked for: ``work`` runs in the run's thread, its value or exception goes to ``reply``."""

    work: Callable[[], Any]
    reply: Future[Any]


@dataclass(frozen=True, slots=True)
class Returned:
    value: Any


@dataclass(frozen=True, slots=True)
class Raised:
    error: BaseException


class _Thread(threading.Thread):
    def run(self) -> None:
        with contextlib.suppress(Abandoned):  # arrived as the script finished: the run has ended already
            super().run()


class ScriptThread:
    """A function in a daemon thread; its requests and its end come to the run's thread by ``next``."""

    def __init__(self, function: Callable[[Any], Any]) -> None:
        self._inbox: queue.SimpleQueue[Request | Returned | Raised] = queue.SimpleQueue()
        self._lock = threading.Lock()  # a request is either answered or failed: never left waiting for nobody
        self._over = self._finished = False
        context = contextvars.copy_context()  # the script sees the caller's context variables, as a tool does
        self.thread = _Thread(target=context.run, args=(self._main, function), name="coordinator-script", daemon=True)

    def start(self, argument: Any) -> None:
        self._argument = argument
        self.thread.start()

    def request(self, work: Callable[[], Any]) -> Any:
        """From the script's thread: have the run's thread do ``work``, and wait for what it gives."""
        reply: Future[Any] = Future()
        with self._lock:
            if self._over:
                raise Abandoned
            self._inbox.put(Request(work, reply))
        return reply.result()

    def next(self, timeout: float) -> Request | Returned | Raised | None:
        """From the run's thread: the script's next request, or its end; None when ``timeout`` passes first."""
        try:
            return self._inbox.get(timeout=max(timeout, 0.0))
        except queue.Empty:
            return None

    def where(self) -> str | None:
        """The line of the script the thread is running now (for a stop reason), if it still runs."""
        frame = sys._current_frames().get(self.thread.ident or -1)
        return location(_frames(frame)) if frame is not None else None

    def abandon(self, waiting: Request | None = None) -> None:
        """The run has ended (once): the script's waiting requests fail, and so does whatever it asks next; a
        script still in its own code gets the exception where it is."""
        with self._lock:
            if self._over:
                return
            self._over = True
            asked = [waiting] if waiting is not None else []
            while (item := self.next(0)) is not None:
                asked += [item] if isinstance(item, Request) else []
        for request in asked:
            if not request.reply.done():
                request.reply.set_exception(Abandoned())
        if not asked and not self._finished and self.thread.ident is not None:
            ident, error = ctypes.c_ulong(self.thread.ident), ctypes.py_object(Abandoned)
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ident, error)

    def _main(self, function: Callable[[Any], Any]) -> None:
        try:
            try:
                outcome: Returned | Raised = Returned(function(self._argument))
            except Abandoned:
                self._finished = True
                return
            except BaseException as error:  # sys.exit in a script is its failure, as any exception
                outcome = Raised(error)
            self._finished = True  # before the run's thread hears of it: it never interrupts a finished script
            self._inbox.put(outcome)
        except Abandoned:  # arrived as it finished
            self._finished = True


def failure_location(error: BaseException) -> str | None:
    """Where in the script ``error`` was raised: its innermost frame in the script's own files."""
    frames, tb = [], error.__traceback__
    while tb is not None:
        frames.append((tb.tb_frame, tb.tb_lineno))
        tb = tb.tb_next
    return location(frames)


def _frames(frame: FrameType | None) -> list[tuple[FrameType, int]]:
    """A running thread's frames, outermost first, each with its current line."""
    found = []
    while frame is not None:
        found.append((frame, frame.f_lineno))
        frame = frame.f_back
    return found[::-1]


def location(frames: list[tuple[FrameType, int]]) -> str | None:
    """``file.py:LINE in function`` of the innermost frame that is the script's (not the runtime's, not the standard
    library's or an installed package's), the file named as its module is (``acme/jobs.py``)."""
    mine = [(frame, line) for frame, line in frames if not _runtimes(Path(frame.f_code.co_filename))]
    own = [(frame, line) for frame, line in mine if not _installed(Path(frame.f_code.co_filename))] or mine
    if not own:  # (a script installed as a package has only "installed" frames: the innermost of them, then)
        return None
    frame, line = own[-1]
    path = Path(frame.f_code.co_filename)
    return f"{_shown(path, str(frame.f_globals.get('__name__', '')))}:{line} in {frame.f_code.co_name}"


def _runtimes(path: Path) -> bool:
    return path.name.startswith("<") or path.resolve().is_relative_to(RUNTIME)


def _installed(path: Path) -> bool:
    """The standard library's, or an installed package's."""
    resolved = path.resolve()
    return any(part in ("site-packages", "dist-packages") for part in resolved.parts) or resolved.is_relative_to(STDLIB)


def _shown(path: Path, module: str) -> str:
    """The file as its module names it: ``pr_job.py``, ``acme/jobs.py`` (never the machine's folders)."""
    depth = len(module.split(".")) + (path.stem == "__init__") if module and module != "__main__" else 1
    return "/".join(path.parts[-depth:])
