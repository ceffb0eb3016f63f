"""A store in a local directory: the embedded default for the CLI and ``make demo``.

Conditional writes hold an exclusive ``flock`` on the item, so two processes working on one thread cannot
lose an update, exactly as with DynamoDB's conditional writes.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .base import Item, Store
from .exceptions import StoreError, VersionConflictError

_SAFE = re.compile(r"[^A-Za-z0-9._@=-]")


def _segment(value: str) -> str:
    # Reversible enough to list, safe on any filesystem: '#' and '/' and friends become '%xx'.
    return _SAFE.sub(lambda m: f"%{ord(m.group(0)):02x}", value)


def _unsegment(value: str) -> str:
    return re.sub(r"%([0-9a-f]{2})", lambda m: chr(int(m.group(1), 16)), value)


class LocalStore(Store):
    def __init__(self, root: Path) -> None:
        self.root = root

    def _dir(self, partition: str) -> Path:
        return self.root / _segment(partition)

    def _blob(self, partition: str, name: str) -> Path:
        return self._dir(partition) / "blobs" / _segment(name)

    def _item(self, partition: str, name: str) -> Path:
        return self._dir(partition) / "items" / f"{_segment(name)}.json"

    def put_blob(self, partition: str, name: str, data: bytes) -> None:
        _atomic_write(self._blob(partition, name), data)

    def read_blob(self, partition: str, name: str, start: int, end: int) -> bytes:
        try:
            with self._blob(partition, name).open("rb") as handle:
                handle.seek(start)
                return handle.read(max(0, end - start))
        except FileNotFoundError:
            raise StoreError(f"no blob {name!r} in {partition!r}") from None

    def blob_size(self, partition: str, name: str) -> int | None:
        path = self._blob(partition, name)
        return path.stat().st_size if path.is_file() else None

    def get_item(self, partition: str, name: str) -> Item | None:
        path = self._item(partition, name)
        try:
            stored = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise StoreError(f"cannot read item {name!r} of {partition!r}: {error}") from None
        if not (
            isinstance(stored, dict) and isinstance(stored.get("data"), dict) and type(stored.get("version")) is int
        ):
            raise StoreError(f"cannot read item {name!r} of {partition!r}: not an item the store wrote")
        expires = stored.get("expires_at")
        if isinstance(expires, int | float) and expires and expires < time.time():
            return None
        return Item(stored["data"], stored["version"])

    def put_item(
        self, partition: str, name: str, data: dict[str, Any], *, expected_version: int | None, ttl: int | None = None
    ) -> int:
        path = self._item(partition, name)
        with _locked(path):
            current = self.get_item(partition, name)
            found = current.version if current else None
            if found != expected_version:
                raise VersionConflictError(f"{partition}/{name}: expected version {expected_version}, found {found}")
            version = (found or 0) + 1
            stored = {"data": data, "version": version, "expires_at": time.time() + ttl if ttl else None}
            _atomic_write(path, json.dumps(stored, ensure_ascii=False).encode("utf-8"))
        return version

    def list_items(self, partition: str, prefix: str = "") -> list[str]:
        folder = self._dir(partition) / "items"
        if not folder.is_dir():
            return []
        names = [_unsegment(p.name[: -len(".json")]) for p in folder.glob("*.json")]
        return sorted(name for name in names if name.startswith(prefix))

    @contextmanager
    def one_at_a_time(self, partition: str, waiting: Callable[[], None]) -> Iterator[None]:
        """Held while one process works on the partition (a thread's turn): another waits its end, told first by
        ``waiting``. The lock is the process's: one killed mid-turn frees it (the next goes on from its checkpoint).
        """
        path = self._dir(partition) / "turn.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                waiting()
                fcntl.flock(lock, fcntl.LOCK_EX)  # Ctrl-C meanwhile: KeyboardInterrupt, nothing started
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def delete_partition(self, partition: str) -> int:
        folder = self._dir(partition)
        if not folder.is_dir():
            return 0
        count = sum(1 for p in folder.rglob("*") if p.is_file() and not p.name.endswith(".lock"))
        shutil.rmtree(folder)
        return count


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as handle:
        handle.write(data)
    os.replace(handle.name, path)
