"""Notion's verification handshake: the token it posts once to a new webhook subscription, kept for the admin.

Notion activates a subscription only when the admin pastes back the ``verification_token`` it posted (unsigned)
to the URL, and then signs every event with that token. The webhook keeps the last few tokens it was sent for a
workflow (with when they came), and ``agent-runtime workflows webhook-token NAME`` prints them. A token is never
trusted by itself: it signs nothing here until the admin puts it in the integrations secret under the workflow's
``secret`` key, so a forged handshake only adds a line the admin will not find in Notion's dialog.
"""

from __future__ import annotations

import re
from typing import Any

from ..stores.base import Store
from ..stores.exceptions import VersionConflictError

KEEP = 5  # tokens per workflow: the admin picks the one whose time matches the click in Notion
TTL_SECONDS = 7 * 24 * 3600  # a handshake not finished in a week is started again in Notion
TOKEN = re.compile(r"[A-Za-z0-9_-]{16,200}")  # Notion's look like secret_<43 letters and digits>
_PARTITION = "webhook#{}"


class Handshakes:
    """The verification tokens posted to each workflow's route, newest first."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def save(self, workflow: str, token: str, at: float) -> None:
        for attempt in range(3):  # two handshakes at once: the second reads the first's and writes again
            item = self.store.get_item(_PARTITION.format(workflow), "verification")
            kept = [t for t in _entries(item.data if item else {}) if t["token"] != token]
            entries = {"tokens": [{"token": token, "at": at}, *kept][:KEEP]}
            try:
                self.store.put_item(
                    _PARTITION.format(workflow),
                    "verification",
                    entries,
                    expected_version=item.version if item else None,
                    ttl=TTL_SECONDS,
                )
                return
            except VersionConflictError:
                if attempt == 2:
                    raise

    def tokens(self, workflow: str) -> list[dict[str, Any]]:
        item = self.store.get_item(_PARTITION.format(workflow), "verification")
        return _entries(item.data if item else {})


def _entries(data: dict[str, Any]) -> list[dict[str, Any]]:
    entries = data.get("tokens")
    return [e for e in entries or [] if isinstance(e, dict) and isinstance(e.get("token"), str)]


def handshake_token(payload: Any) -> str | None:
    """The token of Notion's handshake body (``{"verification_token": "..."}`` and nothing else), else None."""
    if not isinstance(payload, dict) or set(payload) != {"verification_token"}:
        return None
    token = payload["verification_token"]
    return token if isinstance(token, str) and TOKEN.fullmatch(token) else None
