"""What the demo model's answers must never show: the run's internals (file ids, mime types, the engine's lines)."""

from __future__ import annotations

import re

from agent_runtime.files import InMemoryFileStore

ENGINE = ("[context status", "## Files", "virtual file", "user-turn", "Read them with the file tools", "[masked")


def leaks(answer: str, files: InMemoryFileStore) -> list[str]:
    """What of the run's internals the answer shows."""
    found = [meta.id for meta in files.list() if meta.id in answer]
    found += [meta.mimetype for meta in files.list() if meta.mimetype and meta.mimetype in answer]
    found += [mark for mark in ENGINE if mark in answer]
    return found + re.findall(r"\bfile-[0-9a-f]{6,}", answer)
