"""The store interface: ranged blobs and versioned JSON items. Everything durable sits on these primitives.

Keys are (partition, sort) pairs: ``("thread#T-1", "state")``, ``("run#R-1", "checkpoint")``,
``("run#R-1", "file#file-ab12")``. One partition holds one thread's or one run's data, so it can be listed
and deleted together. Items carry a version; a write names the version it read, and loses cleanly if someone
else wrote in between.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Item:
    data: dict[str, Any]
    version: int


class Store(ABC):
    """Subclasses implement the primitives; the helpers below are shared."""

    # Blobs: bytes, read by range so a 100 MB file never has to fit in memory.
    @abstractmethod
    def put_blob(self, partition: str, name: str, data: bytes) -> None: ...

    @abstractmethod
    def read_blob(self, partition: str, name: str, start: int, end: int) -> bytes:
        """Bytes ``[start, end)``."""

    @abstractmethod
    def blob_size(self, partition: str, name: str) -> int | None: ...

    # Items: small JSON documents with optimistic concurrency.
    @abstractmethod
    def get_item(self, partition: str, name: str) -> Item | None: ...

    @abstractmethod
    def put_item(
        self, partition: str, name: str, data: dict[str, Any], *, expected_version: int | None, ttl: int | None = None
    ) -> int:
        """Write if the stored version equals ``expected_version`` (None: only if absent). Returns the new version.

        Raises ``VersionConflictError`` otherwise. ``ttl``: seconds until the item may be expired.
        """

    @abstractmethod
    def list_items(self, partition: str, prefix: str = "") -> list[str]:
        """Names of the items in a partition that start with ``prefix``."""

    @abstractmethod
    def delete_partition(self, partition: str) -> int:
        """Delete a partition's items and blobs; returns how many were removed."""

    def items(self, partition: str, *, skip: tuple[str, ...] = ()) -> dict[str, Item]:
        """Every item of a partition but those whose name starts with one of ``skip`` (large ones a reader fetches
        when it needs them), by name. A store that can reads them in one query (DynamoDB: one Query, paged)."""
        found = {}
        for name in self.list_items(partition):
            if not name.startswith(skip) and (item := self.get_item(partition, name)) is not None:
                found[name] = item
        return found

    def iter_blob(self, partition: str, name: str, start: int, end: int, chunk: int) -> Iterator[bytes]:
        """Bytes ``[start, end)`` in pieces of ``chunk`` (ranged reads; a store may stream one request)."""
        for offset in range(start, end, chunk):
            yield self.read_blob(partition, name, offset, min(offset + chunk, end))

    def put_latest(self, partition: str, name: str, data: dict[str, Any], *, ttl: int | None = None) -> int:
        """Write whatever version is stored (for data only this writer owns, such as a run record)."""
        current = self.get_item(partition, name)
        return self.put_item(partition, name, data, expected_version=current.version if current else None, ttl=ttl)
