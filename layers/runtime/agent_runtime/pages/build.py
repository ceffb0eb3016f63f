"""A stored run's page: its record (with ratings), its checkpoint's history, the event that started it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..stores import RunStore
from .html import RunPage, render


def page_for(
    runs: RunStore,
    run_id: str,
    *,
    private: bool | None = None,
    redact: Callable[[str], str] = lambda text: text,
    note: str = "",
    record: Mapping[str, Any] | None = None,
) -> str | None:
    """The HTML, or None when the store has no such run. ``private`` None: a direct message counts as private
    (a link says what the worker found when it made it). ``record``: the one the caller has loaded already."""
    record = record if record is not None else runs.load_record(run_id)
    if record is None:
        return None
    checkpoint = runs.load_checkpoint(run_id)
    trigger = runs.load_event(run_id)
    if private is None:
        private = bool(trigger is not None and trigger.attributes.get("direct_message"))
    history = checkpoint[0].messages if checkpoint else None
    return render(RunPage(record, history, trigger.to_dict() if trigger else None, private, redact, note))
