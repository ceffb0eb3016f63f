"""Persistence: a store interface (ranged blobs, versioned items), local and AWS implementations, and the
files, runs, threads and checkpoints built on it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .base import Item, Store
    from .durable_files import StoreFileStore
    from .exceptions import StoreError, VersionConflictError
    from .hook import PersistenceHook
    from .local import LocalStore
    from .opening import open_store
    from .runs import RunStore, StoreSummaryMemo, ThreadStore, run_partition, thread_partition

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Item": ".base",
        "Store": ".base",
        "StoreError": ".exceptions",
        "VersionConflictError": ".exceptions",
        "StoreFileStore": ".durable_files",
        "PersistenceHook": ".hook",
        "LocalStore": ".local",
        "open_store": ".opening",
        "RunStore": ".runs",
        "StoreSummaryMemo": ".runs",
        "ThreadStore": ".runs",
        "run_partition": ".runs",
        "thread_partition": ".runs",
    },
)


__all__ = [
    "Item",
    "LocalStore",
    "PersistenceHook",
    "RunStore",
    "Store",
    "StoreError",
    "StoreFileStore",
    "StoreSummaryMemo",
    "ThreadStore",
    "VersionConflictError",
    "open_store",
    "run_partition",
    "thread_partition",
]
