"""Which files the model knows of. A run's first turn lists every file in its system prompt and a thread's next
turn lists the files new to it (``Agent._start``); the files a run makes itself — a tool's output, a long message
the engine kept as a file — the model met where they were made, so they count as announced when the run ends
(listed again, they would read as the person's attachments)."""

from __future__ import annotations

import logging

from ..files import FileStore
from ..record import RunState

logger = logging.getLogger(__name__)


def met_files(state: RunState, files: FileStore) -> None:
    """The files the run made (a tool's output, a message the engine kept as a file) count as announced: the model
    met them where they were made, and the thread's next turn lists only what is new to it (the person's)."""
    known = set(state.announced_files)
    try:
        made = [f.id for f in files.list() if f.id not in known]
    except Exception as error:  # the store's trouble: the next turn lists them again, the run's outcome stands
        logger.warning("error=<%s> | the run's files could not be listed", type(error).__name__)
        return
    state.announced_files.extend(made)
