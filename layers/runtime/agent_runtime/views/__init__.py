"""Reading a finished run: the typed values a stored run and the runs index's rows are read as (``run``,
``rows``), parsed once from what the store holds (``parsing``: pydantic, imported when something is parsed, so
a webhook's cold start never pays for it). Exports are lazy."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .parsing import Unreadable
    from .rows import Rating, RunRow, read_rating, read_row
    from .run import FileEntry, ModelCall, StoredRun, ToolCall, Usage, Window, read_run, whole_run

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Unreadable": ".parsing",
        "Rating": ".rows",
        "RunRow": ".rows",
        "read_rating": ".rows",
        "read_row": ".rows",
        "FileEntry": ".run",
        "ModelCall": ".run",
        "StoredRun": ".run",
        "ToolCall": ".run",
        "Usage": ".run",
        "Window": ".run",
        "read_run": ".run",
        "whole_run": ".run",
    },
)

__all__ = [
    "FileEntry",
    "ModelCall",
    "Rating",
    "RunRow",
    "StoredRun",
    "ToolCall",
    "Unreadable",
    "Usage",
    "Window",
    "read_rating",
    "read_row",
    "read_run",
    "whole_run",
]
