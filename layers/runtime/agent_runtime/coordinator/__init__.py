"""``coordinator: script``: your Python function drives the run through the workflow's tools (``script``: the
``Script`` it is given, the exceptions it may catch, the agent that runs it), its steps journalled by what they
are (``_steps_journal``), in a thread of its own bounded by the run's deadline and stop (``_script_thread``).
A script imports what it catches from here: ``from agent_runtime.coordinator import ToolDenied``."""

from __future__ import annotations

from .script import (
    JSON_NOTE,
    InvalidAnswer,
    InvalidArguments,
    Script,
    ScriptAgent,
    ScriptFailed,
    ToolCallError,
    ToolDenied,
    ToolFailed,
)

__all__ = [
    "JSON_NOTE",
    "InvalidAnswer",
    "InvalidArguments",
    "Script",
    "ScriptAgent",
    "ScriptFailed",
    "ToolCallError",
    "ToolDenied",
    "ToolFailed",
]
