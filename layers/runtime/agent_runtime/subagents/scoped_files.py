"""A child's view of the parent's files: shared files by reference (read-only, no copies) plus its own."""

from __future__ import annotations

from collections.abc import Iterable

from ..files import FileMeta, FileStore, InMemoryFileStore


class ScopedFileStore(FileStore):
    """Reads of ``shared`` ids go to the parent's store; everything the child writes stays in its overlay."""

    def __init__(self, parent: FileStore, shared: Iterable[str]) -> None:
        self.parent = parent
        self.shared = list(dict.fromkeys(shared))
        self.own = InMemoryFileStore()

    def _write(self, meta: FileMeta, data: bytes) -> None:
        self.own._write(meta, data)  # never into the parent's store: shared files stay untouched

    def _read(self, file_id: str, start: int, end: int) -> bytes:
        store = self.parent if file_id in self.shared else self.own
        return store._read(file_id, start, end)

    def _load_meta(self, file_id: str) -> FileMeta | None:
        if file_id in self.shared:
            return self.parent._load_meta(file_id)
        return self.own._load_meta(file_id)

    def _list_meta(self) -> list[FileMeta]:
        shared = [meta for file_id in self.shared if (meta := self.parent._load_meta(file_id)) is not None]
        return shared + self.own._list_meta()
