"""Files as a core construct: a store interface, metadata, and the always-on file tools."""

from __future__ import annotations

from .exceptions import FileInputError, FileNotFoundInStoreError, FileRangeError
from .store import EXTRACTED, FileMeta, FileStore, InMemoryFileStore, guess_mimetype, is_text

__all__ = [
    "EXTRACTED",
    "FileInputError",
    "FileMeta",
    "FileNotFoundInStoreError",
    "FileRangeError",
    "FileStore",
    "InMemoryFileStore",
    "guess_mimetype",
    "is_text",
]
