"""The error hierarchy: one base, three families (after pydantic-ai).

* ``ConfigError`` — the developer or the deployment is wrong (bad workflow file, missing setting). Fix the input.
* ``RunError`` — the run could not finish (model unreachable after retries, context overflow nobody handled).
* ``ToolError`` — raised inside a tool; the loop returns its message to the model as an error result so the
  model can correct itself. It never ends the run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Problem:
    """One validation problem: which file, which key or field, and why."""

    file: str
    key: str
    why: str

    def __str__(self) -> str:
        return f"{self.file}: {self.key}: {self.why}"


class AgentRuntimeError(Exception):
    """Base class of every error this package raises on purpose."""


class ConfigError(AgentRuntimeError):
    """Invalid configuration or user input: a workflow file, a CLI argument, an environment variable."""


class RunError(AgentRuntimeError):
    """A run failed and cannot continue on its own."""


class ToolError(AgentRuntimeError):
    """Raised by a tool to report a problem to the model (returned as an error result, not raised further)."""
