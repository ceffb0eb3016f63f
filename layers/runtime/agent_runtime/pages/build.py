"""A stored run's page: the whole run (with ratings), its checkpoint's history, where it was started from."""

from __future__ import annotations

from collections.abc import Callable

from ..stores import RunStore
from ..views.run import StoredRun
from .html import RunPage, render


def page_for(
    runs: RunStore,
    run_id: str,
    *,
    private: bool | None = None,
    redact: Callable[[str], str] = lambda text: text,
    note: str = "",
    run: StoredRun | None = None,
) -> str | None:
    """The HTML, or None when the store has no such run. ``private`` None: a direct message counts as private
    (a link says what the worker found when it made it). ``run``: the one the caller has loaded already."""
    run = run if run is not None else runs.load_run(run_id)
    if run is None:
        return None
    checkpoint = runs.load_checkpoint(run_id)
    started_by, direct = _started(runs, run_id)
    history = checkpoint[0].messages if checkpoint else None
    return render(RunPage(run, history, started_by, direct if private is None else private, redact, note))


def _started(runs: RunStore, run_id: str) -> tuple[str, bool]:
    """Where the run was started from (``slack/app_mention``; no event stored: the command line), and whether in a
    direct message."""
    event = runs.load_event(run_id)
    if event is None:
        return "cli", False
    return f"{event.source}/{event.kind}", bool(event.attributes.get("direct_message"))
