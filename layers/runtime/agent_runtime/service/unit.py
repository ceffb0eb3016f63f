"""One queue message's unit of work over the runs and threads it touches.

A handler and the features it calls (approvals, stops, answers, reports, the pane, the chat channel) read a run's
or a thread's items through the unit: each partition is read once, in one query (``Store.items``), into typed items
(``stores/items.py``), and every later read of the message is served from it. Writes go through it too — an
item only this message writes is written at once and kept in the snapshot, a conditional one (the reply's claim,
a decision, a stop) is decided by the store first — so what the message saw and what it wrote agree. Two reads
are never taken from the snapshot: a stop request (another group's message writes it while the run works) and the
large items a few paths read whole (checkpoints, records, the thread's state), read when asked for.
"""

from __future__ import annotations

from typing import Any, cast

from ..record import RunState
from ..stopping import StopRequest
from ..stores import RunStore, Store, ThreadStore
from ..stores.base import Item
from ..stores.items import StoredItem, parse
from ..stores.runs import CHECKPOINT, FEEDBACK, RECORD, SUMMARY, T, run_partition, thread_partition

# Read whole only when asked for: checkpoints, records and summaries (compaction's memos too: summary#...), a
# thread's state and its files' metadata.
RUN_SKIP = (CHECKPOINT, RECORD, SUMMARY)
THREAD_SKIP = ("state", "file#")


class _Snapshots:
    """Partitions read once each, by name."""

    def __init__(self, store: Store, skip: tuple[str, ...]) -> None:
        self.store, self.skip = store, skip
        self.read: dict[str, dict[str, Item]] = {}

    def _items(self, partition: str) -> dict[str, Item]:
        items = self.read.get(partition)
        if items is None:
            items = self.read[partition] = self.store.items(partition, skip=self.skip)
        return items

    def get(self, partition: str, name: str) -> Any:
        """The typed item (stores/items.py) of that name, or None."""
        data = self.raw(partition, name)
        return None if data is None else parse(name, data)

    def raw(self, partition: str, name: str) -> dict[str, Any] | None:
        item = self._items(partition).get(name)
        return None if item is None else dict(item.data)

    def named(self, partition: str, prefix: str) -> list[dict[str, Any]]:
        items = self._items(partition)
        return [dict(items[name].data) for name in sorted(items) if name.startswith(prefix)]

    def wrote(self, partition: str, name: str, data: dict[str, Any]) -> None:
        if partition in self.read:
            self.read[partition][name] = Item(data, 0)


class UnitRuns(RunStore):
    """A run store whose trigger-path items come from one read of each run's partition."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.snapshots = _Snapshots(store, RUN_SKIP)
        self.checkpoints: dict[str, tuple[RunState, int] | None] = {}

    def _item(self, run_id: str, kind: type[T], key: str = "") -> T | None:
        return cast(T | None, self.snapshots.get(run_partition(run_id), kind.NAME + key))

    def _keep(self, run_id: str, item: StoredItem, key: str = "") -> None:
        super()._keep(run_id, item, key)
        self.snapshots.wrote(run_partition(run_id), item.NAME + key, item.to_data())

    def _first(self, run_id: str, item: StoredItem, key: str = "") -> bool:
        first = super()._first(run_id, item, key)
        if first:
            self.snapshots.wrote(run_partition(run_id), item.NAME + key, item.to_data())
        return first

    def stop_request(self, run_id: str) -> StopRequest | None:
        """Read anew each time: the stop comes in a message group of its own, while this one's run works."""
        return RunStore._item(self, run_id, StopRequest)

    # The large items, read when asked for, once: the checkpoint and the record (the run's own persistence writes
    # them through this unit too: ``runtime.Services.runs``), so a later read of the message sees what it wrote.
    def load_checkpoint(self, run_id: str) -> tuple[RunState, int] | None:
        if run_id not in self.checkpoints:
            self.checkpoints[run_id] = super().load_checkpoint(run_id)
        return self.checkpoints[run_id]

    def save_checkpoint(self, state: RunState, *, expected_version: int | None) -> int:
        version = super().save_checkpoint(state, expected_version=expected_version)
        self.checkpoints.pop(state.run_id, None)  # the state object goes on changing: read anew if asked
        return version

    # The untyped items (the record, its summary, ratings): the record read when asked for, ratings with the rest.
    def _get(self, run_id: str, name: str) -> dict[str, Any] | None:
        if name.startswith(RUN_SKIP):
            return super()._get(run_id, name)
        return self.snapshots.raw(run_partition(run_id), name)

    def _put(self, run_id: str, name: str, data: dict[str, Any]) -> None:
        super()._put(run_id, name, data)
        self.snapshots.wrote(run_partition(run_id), name, data)

    def feedback(self, run_id: str) -> list[dict[str, Any]]:
        return self.snapshots.named(run_partition(run_id), FEEDBACK)


class UnitThreads(ThreadStore):
    """A thread store whose items (not its state) come from one read of each thread's partition."""

    def __init__(self, store: Store) -> None:
        super().__init__(store)
        self.snapshots = _Snapshots(store, THREAD_SKIP)
        self.states: dict[str, tuple[RunState | None, int | None]] = {}

    def _item(self, thread_id: str, kind: type[T]) -> T | None:
        return cast(T | None, self.snapshots.get(thread_partition(thread_id), kind.NAME))

    def _keep(self, thread_id: str, item: StoredItem) -> None:
        super()._keep(thread_id, item)
        self.snapshots.wrote(thread_partition(thread_id), item.NAME, item.to_data())

    def load(self, thread_id: str) -> tuple[RunState | None, int | None]:
        """The thread's state (large: read when asked for, once)."""
        if thread_id not in self.states:
            self.states[thread_id] = super().load(thread_id)
        return self.states[thread_id]

    def save(self, thread_id: str, state: RunState, *, expected_version: int | None) -> int:
        version = super().save(thread_id, state, expected_version=expected_version)
        self.states[thread_id] = (state, version)
        return version


class Unit:
    """The runs and threads one message reads and writes."""

    def __init__(self, store: Store) -> None:
        self.runs, self.threads = UnitRuns(store), UnitThreads(store)
