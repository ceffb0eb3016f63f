"""Files the ``python`` tool wrote during a run, and saving such files to a folder.

The worker attaches a turn's outputs to its answer; ``agent-runtime run --out-dir`` and ``sandbox run --out-dir``
write them to disk. Their names come from untrusted code, so nothing is written outside the folder.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from pathlib import Path

from ..files import FileMeta, FileStore

SOURCE = "sandbox"  # FileMeta.source of files the code wrote


def code_files(files: FileStore) -> list[FileMeta]:
    """The files the ``python`` tool stored."""
    return [meta for meta in files.list() if meta.source == SOURCE]


def written_since(files: FileStore, before: Collection[str]) -> list[FileMeta]:
    """Files the code stored that were not there before (ids hash the content: a rewritten file is new)."""
    return [meta for meta in code_files(files) if meta.id not in before]


def save_files(items: Iterable[tuple[str, bytes]], folder: Path) -> tuple[list[Path], list[str]]:
    """Write each (name, data) under ``folder``; returns the paths written and the names refused."""
    root = folder.resolve()
    written: list[Path] = []
    refused: list[str] = []
    for name, data in items:
        target = (root / name).resolve()
        if root not in target.parents:
            refused.append(name)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append(target)
    return written, refused
