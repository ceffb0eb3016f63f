"""What Slack and JIRA would hold for the playground: messages, the app's pane, files, issues and the deliveries
the page sent, in one SQLite file under the local store (``AGENT_STATE_DIR/playground``), so a restart of ``serve``
shows the same threads.

Every write bumps one version number; the page asks for what changed after the version it has (``changes``) and
waits for the next write when nothing has. Records are JSON bodies by kind and key; a message's channel and thread
are columns too, so a thread is one query.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS records (
    kind TEXT NOT NULL, key TEXT NOT NULL, scope TEXT NOT NULL DEFAULT '', thread TEXT NOT NULL DEFAULT '',
    version INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (kind, key));
CREATE INDEX IF NOT EXISTS records_version ON records (version);
CREATE INDEX IF NOT EXISTS records_thread ON records (kind, scope, thread);
CREATE TABLE IF NOT EXISTS blobs (id TEXT PRIMARY KEY, data BLOB NOT NULL);
"""
MESSAGE, PANE, FILE, ISSUE, DELIVERY = "message", "pane", "file", "issue", "delivery"


class Workspace:
    """One SQLite connection for the process (serve's request threads share it under a lock)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(folder / "workspace.sqlite3", check_same_thread=False, isolation_level=None)
        self.db.executescript(SCHEMA)
        self.changed = threading.Condition()
        self._lock = threading.RLock()
        self.lock = self._lock  # held around a read and its write (a reaction added while a stream appends)
        self.version = int(self.db.execute("SELECT COALESCE(MAX(version), 0) FROM records").fetchone()[0])
        keys = self.db.execute("SELECT key FROM records WHERE kind = ?", (MESSAGE,)).fetchall()
        self._last_ts = max((float(key.rsplit("/", 1)[-1]) for (key,) in keys), default=0.0)

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                yield self.db
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            self.db.execute("COMMIT")
        with self.changed:
            self.changed.notify_all()

    def next_ts(self) -> str:
        """A message's ts as Slack writes it (seconds, six digits), unique and increasing in this workspace."""
        with self._lock:
            self._last_ts = max(round(time.time(), 6), round(self._last_ts + 0.000001, 6))
            return f"{self._last_ts:.6f}"

    def put(self, kind: str, key: str, body: dict[str, Any], *, scope: str = "", thread: str = "") -> int:
        with self._writing() as db:
            self.version += 1
            db.execute(
                "INSERT OR REPLACE INTO records (kind, key, scope, thread, version, body) VALUES (?, ?, ?, ?, ?, ?)",
                (kind, key, scope, thread, self.version, json.dumps(body)),
            )
            return self.version

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        with self._lock:
            row = self.db.execute("SELECT body FROM records WHERE kind = ? AND key = ?", (kind, key)).fetchone()
        return json.loads(row[0]) if row else None

    def all(self, kind: str, *, scope: str | None = None, thread: str | None = None) -> list[dict[str, Any]]:
        query, args = "SELECT body FROM records WHERE kind = ?", [kind]
        if scope is not None:
            query, args = query + " AND scope = ?", [*args, scope]
        if thread is not None:
            query, args = query + " AND thread = ?", [*args, thread]
        with self._lock:
            rows = self.db.execute(query + " ORDER BY key", args).fetchall()
        return [json.loads(row[0]) for row in rows]

    def put_blob(self, blob_id: str, data: bytes) -> None:
        with self._writing() as db:
            db.execute("INSERT OR REPLACE INTO blobs (id, data) VALUES (?, ?)", (blob_id, data))

    def blob(self, blob_id: str) -> bytes | None:
        with self._lock:
            row = self.db.execute("SELECT data FROM blobs WHERE id = ?", (blob_id,)).fetchone()
        return bytes(row[0]) if row else None

    # Messages: keyed by channel and ts; a reply's thread is its parent's ts (a parent's own thread is its ts).
    def message(self, channel: str, ts: str) -> dict[str, Any] | None:
        return self.get(MESSAGE, f"{channel}/{ts}")

    def save(self, message: dict[str, Any]) -> dict[str, Any]:
        channel, ts = str(message["channel"]), str(message["ts"])
        self.put(MESSAGE, f"{channel}/{ts}", message, scope=channel, thread=str(message.get("thread_ts") or ts))
        return message

    def thread(self, channel: str, thread_ts: str) -> list[dict[str, Any]]:
        """The parent and its replies, oldest first (what ``conversations.replies`` lists)."""
        found = self.all(MESSAGE, scope=channel, thread=thread_ts)
        return sorted((m for m in found if _listed(m)), key=lambda m: float(m["ts"]))

    def history(self, channel: str) -> list[dict[str, Any]]:
        """The channel's own messages (not replies), newest first (``conversations.history``)."""
        found = self.all(MESSAGE, scope=channel)
        top = [m for m in found if _listed(m) and m.get("thread_ts") in (None, m["ts"])]
        return sorted(top, key=lambda m: float(m["ts"]), reverse=True)

    def changes(self, after: int, wait: float) -> tuple[int, list[dict[str, Any]]]:
        """Every record written after version ``after`` (kind, key and body), waiting up to ``wait`` seconds for
        one when there is none yet."""
        with self.changed:
            if self.version <= after:
                self.changed.wait(wait)
        with self._lock:
            rows = self.db.execute(
                "SELECT kind, key, version, body FROM records WHERE version > ? ORDER BY version", (after,)
            ).fetchall()
            version = self.version
        return version, [{"kind": k, "key": key, "version": v, "body": json.loads(b)} for k, key, v, b in rows]

    def close(self) -> None:
        with self._lock:
            self.db.close()


def _listed(message: dict[str, Any]) -> bool:
    """Neither deleted nor ephemeral (seen by one person only, never in what the Web API lists)."""
    return not message.get("_deleted") and not message.get("_to")
