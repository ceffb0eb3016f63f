"""The registry: tools by name, and the one place a tool call is executed safely.

Whatever goes wrong inside a call (unknown tool, arguments that are not JSON, a validation error, a
``ToolError``, an unexpected exception) becomes an error result the model sees. Nothing here ends a run.
"""

from __future__ import annotations

import contextvars
import dataclasses
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, ToolError
from ..models.base import ToolCall
from ..run_context import CURRENT_CALL, RunContext
from .decorator import Tool

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """The result of one call, ready to become a ``tool`` message."""

    call: ToolCall
    content: str
    is_error: bool = False
    mutating: bool = False
    duration_ms: float = 0.0

    def to_record(self) -> dict[str, Any]:
        """The run-record entry (names and status, never the payload)."""
        return {
            "id": self.call.id,
            "name": self.call.name,
            "is_error": self.is_error,
            "mutating": self.mutating,
            "duration_ms": round(self.duration_ms, 1),
        }


def error_text(message: str) -> str:
    return f"ERROR: {message}"


class ToolRegistry:
    """Tools by name. Order is kept: it is the order the model sees them in."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for item in tools:
            self.register(item)

    def register(self, item: Tool) -> None:
        if not isinstance(item, Tool):
            raise ConfigError(f"{item!r} is not a Tool; decorate it with @tool")
        if item.name in self._tools:
            raise ConfigError(f"two tools are named {item.name!r}")
        self._tools[item.name] = item

    def replace(self, item: Tool) -> None:
        """Put ``item`` in place of the tool of its name, or add it. A stand-in for a deferred tool stays deferred.
        An eval's stub is offered and asked for as the tool it replaces (its description, schema, ``mutating`` and
        approval: an MCP server's tool is known only once connected); only what it returns is its own."""
        old = self._tools.get(item.name)
        if old is not None and item.stub and not old.stub:
            kept = ("description", "parameters", "mutating", "approval")
            item = dataclasses.replace(item, **{key: getattr(old, key) for key in kept})
        self._tools[item.name] = dataclasses.replace(item, deferred=True) if old and old.deferred else item

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    def names(self) -> list[str]:
        return list(self._tools)

    def specs(self) -> list[dict[str, Any]]:
        """The request's tools: every tool but the deferred ones (a search finds those)."""
        return [item.spec() for item in self._tools.values() if not item.deferred]

    def reveal(self, name: str) -> None:
        """A deferred tool joins the request's tool list (toolsearch: a found tool, at a compaction)."""
        self._tools[name] = dataclasses.replace(self._tools[name], deferred=False)

    def deferred(self) -> list[Tool]:
        return [item for item in self._tools.values() if item.deferred]

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def execute(self, call: ToolCall, context: RunContext | None = None) -> ToolOutcome:
        """Run one call; every failure is returned as an error outcome."""
        started = time.monotonic()
        item = self._tools.get(call.name)
        try:
            if item is None:
                raise ToolError(f"there is no tool named {call.name!r}; available: {self._available()}")
            token = CURRENT_CALL.set(call.id)
            try:
                content = _invoke(item, parse_arguments(call.arguments), context)
            finally:
                CURRENT_CALL.reset(token)
            is_error = False
        except ToolError as error:
            content, is_error = error_text(str(error)), True
        except SystemExit as error:  # a command-line library's exit (argparse, click) must not end the process
            logger.warning("tool=<%s>, code=<%s> | tool called sys.exit", call.name, error.code)
            content = error_text(f"tool {call.name!r} exited (sys.exit({error.code!r})) before returning a result")
            is_error = True
        except Exception as error:  # a bug in a tool must not kill the run; the model is told, we log it
            # The traceback may quote payload data, so it is only logged at debug level.
            logger.warning("tool=<%s>, error=<%s> | tool raised", call.name, type(error).__name__)
            logger.debug("tool=<%s> | traceback", call.name, exc_info=True)
            content, is_error = error_text(f"tool {call.name!r} failed: {type(error).__name__}: {error}"), True
        return ToolOutcome(
            call=call,
            content=content,
            is_error=is_error,
            mutating=bool(item and item.mutating),
            duration_ms=(time.monotonic() - started) * 1000,
        )

    def _available(self) -> str:
        """The names the model was given (a catalogue of hundreds of deferred names is searched, not listed)."""
        sent = ", ".join(item.name for item in self._tools.values() if not item.deferred)
        hidden = len(self.deferred())
        return sent + (f" (and {hidden} more: find them with tool_search)" if hidden else "")


def _invoke(item: Tool, arguments: dict[str, Any], context: RunContext | None) -> str:
    """The call, bounded when the tool has a time limit (and by the run's deadline): it runs in a thread of its
    own, which is left behind if it never returns (a thread cannot be stopped: its effect is then unknown)."""
    if item.timeout is None:
        return item.invoke(arguments, context)
    limit = item.timeout
    if context is not None and context.deadline.at is not None:
        limit = min(limit, max(0.0, context.deadline.remaining()))
    box: dict[str, Any] = {}
    copied = contextvars.copy_context()

    def run() -> None:
        try:
            box["value"] = copied.run(item.invoke, arguments, context)
        except BaseException as error:  # handed back to the caller's thread, SystemExit included
            box["error"] = error

    worker = threading.Thread(target=run, name=f"tool-{item.name}", daemon=True)
    worker.start()
    worker.join(limit)
    if worker.is_alive():
        raise ToolError(f"did not finish within {limit:.0f} s; it may still be running, so its effect is unknown")
    if "error" in box:
        raise box["error"]
    return str(box["value"])


def parse_arguments(raw: str) -> dict[str, Any]:
    """Decode the model's argument string; malformed JSON is a tool error the model can fix."""
    if raw.strip() == "":
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as error:
        raise ToolError(
            f"the arguments are not valid JSON ({error.msg} at position {error.pos}); "
            "send the call again with a JSON object"
        ) from None
    if not isinstance(value, dict):
        raise ToolError(f"the arguments must be a JSON object, not {type(value).__name__}")
    return value
