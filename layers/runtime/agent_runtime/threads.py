"""Threads: a conversation that continues across external turns (a Slack thread, a JIRA issue, ``--thread``).

This local store keeps each thread's state as one JSON file, written atomically. The persistence layer
(S3 + DynamoDB) implements the same two methods with versioned conditional writes.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path

from .errors import ConfigError
from .record import RunState

_THREAD_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:-]{0,199}$")


def check_thread_id(thread_id: str) -> str:
    if not _THREAD_ID.match(thread_id):
        raise ConfigError(f"thread id {thread_id!r}: use up to 200 letters, digits, '.', '_', ':' or '-'")
    return thread_id


class LocalThreadStore:
    """Thread states under ``<directory>/threads/<id>.json``."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory / "threads"

    def _path(self, thread_id: str) -> Path:
        return self.directory / f"{check_thread_id(thread_id).replace(':', '_')}.json"

    def load(self, thread_id: str) -> RunState | None:
        path = self._path(thread_id)
        try:
            return RunState.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError) as error:
            raise ConfigError(f"thread {thread_id!r}: cannot read {path}: {error}") from None

    def save(self, thread_id: str, state: RunState) -> None:
        path = self._path(thread_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename, so a crash never leaves a half-written thread behind.
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False, encoding="utf-8") as handle:
            json.dump(state.to_dict(), handle, ensure_ascii=False)
        os.replace(handle.name, path)
