"""Files in a store: content as a blob (read by range), metadata as an item. Files are content-addressed and
never change, so metadata is cached after the first read."""

from __future__ import annotations

import threading
from collections.abc import Iterator

from ..files import FileMeta, FileStore
from ..files.store import CHUNK_SIZE
from .base import Store


class StoreFileStore(FileStore):
    def __init__(self, store: Store, partition: str) -> None:
        self.store, self.partition = store, partition
        self._meta: dict[str, FileMeta] = {}
        self._listed = False
        self._lock = threading.Lock()

    def _write(self, meta: FileMeta, data: bytes) -> None:
        self.store.put_blob(self.partition, f"file#{meta.id}", data)
        self.store.put_latest(self.partition, f"file#{meta.id}", meta.to_dict())
        with self._lock:
            self._meta[meta.id] = meta

    def _read(self, file_id: str, start: int, end: int) -> bytes:
        return self.store.read_blob(self.partition, f"file#{file_id}", start, end)

    def iter_chunks(self, file_id: str, *, chunk_size: int = CHUNK_SIZE, start: int = 0) -> Iterator[bytes]:
        size = self.meta(file_id).size_bytes
        return self.store.iter_blob(self.partition, f"file#{file_id}", start, size, chunk_size)

    def _load_meta(self, file_id: str) -> FileMeta | None:
        if file_id in self._meta:
            return self._meta[file_id]
        item = self.store.get_item(self.partition, f"file#{file_id}")
        if item is None:
            return None
        meta = FileMeta(**item.data)
        with self._lock:
            self._meta[file_id] = meta
        return meta

    def _list_meta(self) -> list[FileMeta]:
        if not self._listed:  # once: later files are written through this object
            for name in self.store.list_items(self.partition, "file#"):
                self._load_meta(name.removeprefix("file#"))
            self._listed = True
        with self._lock:
            return list(self._meta.values())
