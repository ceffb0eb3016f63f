"""Persistence: a store interface (ranged blobs, versioned items), local and AWS implementations, and the
files, runs, threads and checkpoints built on it."""

from __future__ import annotations

from .base import Item, Store
from .exceptions import StoreError, VersionConflictError
from .files import StoreFileStore
from .hook import PersistenceHook
from .local import LocalStore
from .runs import RunStore, StoreSummaryMemo, ThreadStore, run_partition, thread_partition

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
    "run_partition",
    "thread_partition",
]
