"""Store errors."""

from __future__ import annotations

from ..errors import RunError


class StoreError(RunError):
    """The store could not be read or written."""


class VersionConflictError(StoreError):
    """Someone else wrote the item since it was read: reload and retry, or yield."""


class InvalidStateError(StoreError):
    """A state that would fail validation on its next use (an orphaned tool call or result) is never saved."""
