"""The context engine: exact token ledger, status message, virtual files, read coverage, compaction."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..workflows.context import ContextSettings
    from .counter import TokenCounter
    from .encodings import encoding_for_model, encoding_name_for, load_encoding
    from .engine import ContextEngine
    from .history import InvalidHistoryError, check_history

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "TokenCounter": ".counter",
        "encoding_for_model": ".encodings",
        "encoding_name_for": ".encodings",
        "load_encoding": ".encodings",
        "ContextEngine": ".engine",
        "InvalidHistoryError": ".history",
        "check_history": ".history",
        "ContextSettings": "..workflows.context",
    },
)


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
