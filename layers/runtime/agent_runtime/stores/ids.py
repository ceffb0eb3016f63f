"""What a thread id and a run id may be: checked where they come in (a route, a flag) and where they are stored.

Apart from ``runs.py`` so that the webhook checks an id without loading the run record and its events.
"""

from __future__ import annotations

import re

from ..errors import ConfigError

_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,199}")  # a run id, whole: what a route may take as one


def check_thread_id(thread_id: str) -> str:
    if not _THREAD_ID.fullmatch(thread_id):
        raise ConfigError(f"thread id {thread_id!r}: use up to 200 letters, digits, '.', '_', ':' or '-'")
    return thread_id
