"""Tools: the ``@tool`` decorator, the registry, and safe execution of the model's calls."""

from __future__ import annotations

from .decorator import Tool, render_result, tool
from .registry import ToolOutcome, ToolRegistry, error_text, parse_arguments

__all__ = ["Tool", "ToolOutcome", "ToolRegistry", "error_text", "parse_arguments", "render_result", "tool"]
