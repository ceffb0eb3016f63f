"""The context engine: exact token ledger, status message, virtual files, read coverage, compaction."""

from __future__ import annotations

from .counter import TokenCounter
from .encodings import encoding_for_model, encoding_name_for, load_encoding
from .engine import ContextEngine
from .history import InvalidHistoryError, check_history
from .settings import ContextSettings

__all__ = [
    "ContextEngine",
    "ContextSettings",
    "InvalidHistoryError",
    "TokenCounter",
    "check_history",
    "encoding_for_model",
    "encoding_name_for",
    "load_encoding",
]
