"""The embedded demo model, opened when no endpoint is configured: its server on 127.0.0.1 and its one-line notice.

The notice is said as the first model call is about to go out, once per process: not before a run's config error
(a tool that cannot be imported), not by a run that never calls a model, not once per run of ``serve``.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TextIO

import openai

from .models import ModelRequest, ModelResponse, OpenAIChatModel, RetryPolicy

DEMO_WORKFLOW = "document-feedback"  # the workflow the embedded demo model is scripted for (make demo)
CANNED = (
    ": its answers are CANNED (scripted for this repository's example workflows; it calls a tool you "
    "name with the values your message gives), not a model's — set "
    "OPENAI_BASE_URL (and OPENAI_API_KEY) for real answers, or see docs/local-models.md"
)

_told: set[bool] = set()  # on stderr, per process: the plain notice and the CANNED one, each said once
_lock = threading.Lock()  # serve's lanes open models at once


class NoticedModel(OpenAIChatModel):
    """The demo model's client: ``notice`` is called before each call (it says its line the first time only)."""

    def __init__(self, name: str, *, client: openai.OpenAI, retry: RetryPolicy, notice: Callable[[], None]) -> None:
        super().__init__(name, client=client, retry=retry)
        self._notice = notice

    def complete(self, request: ModelRequest) -> ModelResponse:
        self._notice()
        return super().complete(request)


@contextmanager
def open_demo_model(workflow: str, name: str, retry: RetryPolicy, notice: TextIO | None) -> Iterator[OpenAIChatModel]:
    """The demo model for a run of ``workflow``; its notice goes to ``notice`` at each opening's first call, or
    to stderr at the process's first call (per kind: canned answers or the workflow it is scripted for)."""
    from .testing.demo import demo_script  # only without a configured endpoint: not in a deployed function
    from .testing.server import ScriptedServer

    with ScriptedServer(demo_script(), model=name) as server:
        canned = "" if workflow == DEMO_WORKFLOW else CANNED
        line = "agent-runtime: OPENAI_API_KEY and OPENAI_BASE_URL are unset: using the embedded demo model "
        line += f"at {server.base_url}{canned}"
        yield NoticedModel(name, client=server.client(), retry=retry, notice=_teller(line, bool(canned), notice))


def _teller(line: str, canned: bool, notice: TextIO | None) -> Callable[[], None]:
    """Says ``line`` once: on ``notice`` at this opening's first call, on stderr at the process's first of its
    kind."""
    said = threading.Event()

    def tell() -> None:
        if said.is_set():
            return
        said.set()
        if notice is not None:
            print(line, file=notice)
            return
        with _lock:
            if canned in _told:
                return
            _told.add(canned)
        print(line, file=sys.stderr, flush=True)

    return tell
