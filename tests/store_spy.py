"""The store from the side: a spy on who reads and writes runs and threads, an item written in the local layout."""

from __future__ import annotations

import collections
import json
import traceback
from collections.abc import Iterator
from typing import Any

from agent_runtime.stores import LocalStore
from agent_runtime.stores.base import Item, Store


class Spy(Store):
    """Counts, per place (the first ``module:function`` of the package outside ``agent_runtime/stores/``), the
    reads and writes of run and thread items; a thread's files (their items and blobs) are not counted."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.places: collections.Counter[str] = collections.Counter()
        self.queries: collections.Counter[str] = collections.Counter()  # whole-partition reads, by partition

    def _note(self, partition: str, name: str = "") -> None:
        if not partition.startswith(("run#", "thread#")) or name.startswith("file#"):
            return
        for frame in reversed(traceback.extract_stack()[:-2]):
            inside = frame.filename.split("agent_runtime/", 1)
            if len(inside) == 2 and not inside[1].startswith("stores/"):
                self.places[f"{inside[1]}:{frame.name}"] += 1
                return

    def put_blob(self, partition: str, name: str, data: bytes) -> None:
        self.inner.put_blob(partition, name, data)

    def read_blob(self, partition: str, name: str, start: int, end: int) -> bytes:
        return self.inner.read_blob(partition, name, start, end)

    def blob_size(self, partition: str, name: str) -> int | None:
        return self.inner.blob_size(partition, name)

    def iter_blob(self, partition: str, name: str, start: int, end: int, chunk: int) -> Iterator[bytes]:
        return self.inner.iter_blob(partition, name, start, end, chunk)

    def delete_partition(self, partition: str) -> int:
        return self.inner.delete_partition(partition)

    def get_item(self, partition: str, name: str) -> Item | None:
        self._note(partition, name)
        return self.inner.get_item(partition, name)

    def put_item(
        self, partition: str, name: str, data: dict[str, Any], *, expected_version: int | None, ttl: int | None = None
    ) -> int:
        self._note(partition, name)
        return self.inner.put_item(partition, name, data, expected_version=expected_version, ttl=ttl)

    def list_items(self, partition: str, prefix: str = "") -> list[str]:
        self._note(partition, prefix)
        return self.inner.list_items(partition, prefix)

    def items(self, partition: str, *, skip: tuple[str, ...] = ()) -> dict[str, Item]:
        self._note(partition)
        self.queries[partition] += 1
        return self.inner.items(partition, skip=skip)


def write(store: LocalStore, partition: str, name: str, data: object) -> None:
    """An item in the local store's own layout, written straight: 3,000 runs in about a second, not ten."""
    path = store._item(partition, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"data": data, "version": 1, "expires_at": None}))
