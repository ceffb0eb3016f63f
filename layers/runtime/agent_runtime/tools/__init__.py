"""Tools: the ``@tool`` decorator, the registry, and safe execution of the model's calls."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .decorator import Tool, render_result, tool
    from .registry import ToolOutcome, ToolRegistry, error_text, parse_arguments

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Tool": ".decorator",
        "render_result": ".decorator",
        "tool": ".decorator",
        "ToolOutcome": ".registry",
        "ToolRegistry": ".registry",
        "error_text": ".registry",
        "parse_arguments": ".registry",
    },
)


__all__ = ["Tool", "ToolOutcome", "ToolRegistry", "error_text", "parse_arguments", "render_result", "tool"]
