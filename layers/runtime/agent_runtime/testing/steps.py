"""Script steps for the scripted model: what the fake assistant does on each request."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..context.history import STATUS_MARK
from ..context.prompts import SUMMARY_SYSTEM
from ..messages import Message, text_of

COMPACTION_PROMPT_START = SUMMARY_SYSTEM[:60]


@dataclass(frozen=True, slots=True)
class ScriptedCall:
    """A tool call to emit. ``arguments`` may be a raw string, to send invalid JSON on purpose."""

    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None

    def raw_arguments(self) -> str:
        return self.arguments if isinstance(self.arguments, str) else json.dumps(self.arguments)


@dataclass(frozen=True, slots=True)
class Reply:
    """An assistant turn: text, tool calls, or both."""

    text: str | None = None
    calls: tuple[ScriptedCall, ...] = ()
    finish_reason: str | None = None
    completion_tokens: int | None = None  # default: about a token per four characters; the cap when cut off


@dataclass(frozen=True, slots=True)
class Fail:
    """An HTTP error response, e.g. 429, 500, or a 400 ``context_length_exceeded``."""

    status: int
    message: str = "scripted failure"
    code: str | None = None
    error_type: str = "server_error"
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Raw:
    """A response body sent as is: a proxy's HTML page, a completion with a null message, broken JSON."""

    body: bytes | dict[str, Any]
    status: int = 200
    content_type: str = "application/json"


@dataclass(frozen=True, slots=True)
class Paced:
    """A reply streamed slowly, as a CPU server writes: ``interval`` seconds between chunks, and after
    ``stall_after`` chunks ``stall`` seconds of silence (a server that stopped answering). A client that goes
    away ends it: the server records the request as abandoned, as a real one stops generating."""

    reply: Reply
    interval: float = 0.0
    stall_after: int | None = None
    stall: float = 0.0


@dataclass(frozen=True, slots=True)
class ScriptedRequest:
    """One request as the server received it, with helpers for responder steps."""

    index: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)  # lower-case names, as sent (authorization, ...)

    @property
    def messages(self) -> list[Message]:
        return list(self.body.get("messages", []))

    @property
    def tool_names(self) -> list[str]:
        return [tool["function"]["name"] for tool in self.body.get("tools", [])]

    def tool_results(self) -> dict[str, str]:
        """Results of the latest batch of tool calls, by call id."""
        results: dict[str, str] = {}
        history = (
            self.messages[:-1]
            if self.messages and text_of(self.messages[-1]).startswith(STATUS_MARK)
            else (self.messages)
        )
        for message in reversed(history):
            if message["role"] != "tool":
                break
            results[message.get("tool_call_id", "")] = text_of(message)
        return dict(reversed(list(results.items())))

    def last_user_text(self) -> str:
        return next((text_of(m) for m in reversed(self.messages) if m["role"] == "user"), "")

    def system_text(self) -> str:
        """The leading system messages (the workflow's prompt), not the status at the tail."""
        leading = []
        for message in self.messages:
            if message["role"] != "system":
                break
            leading.append(text_of(message))
        return "\n".join(leading)

    def is_compaction(self) -> bool:
        """Is this the context engine's summary call (not a turn of the conversation)?"""
        return self.system_text().startswith(COMPACTION_PROMPT_START)

    def status_text(self) -> str:
        """The context engine's status at the tail of the request, if any (a message of its own, or joined to the
        last user message)."""
        last = text_of(self.messages[-1]) if self.messages else ""
        if last.startswith(STATUS_MARK):
            return last
        at = last.rfind("\n\n" + STATUS_MARK) if self.messages and self.messages[-1]["role"] == "user" else -1
        return last[at + 2 :] if at >= 0 else ""


Responder = Callable[[ScriptedRequest], "Reply | Fail | Raw | Paced"]
Step = Reply | Fail | Raw | Paced | Responder


def reply(text: str) -> Reply:
    """A final text answer."""
    return Reply(text=text)


def call(name: str, arguments: dict[str, Any] | str | None = None, *, id: str | None = None) -> Reply:
    """One tool call."""
    return Reply(calls=(ScriptedCall(name, {} if arguments is None else arguments, id),))


def calls(*items: ScriptedCall | tuple[str, dict[str, Any] | str]) -> Reply:
    """Several tool calls in one turn (parallel tool calls)."""
    built = tuple(item if isinstance(item, ScriptedCall) else ScriptedCall(*item) for item in items)
    return Reply(calls=built)


def rate_limited(retry_after: float | None = None) -> Fail:
    headers = {} if retry_after is None else {"retry-after": str(retry_after)}
    return Fail(429, "Rate limit reached", code="rate_limit_exceeded", error_type="requests", headers=headers)


def server_error(status: int = 500) -> Fail:
    return Fail(status, "The server had an error while processing your request.")


def context_overflow(limit: int = 8192, used: int = 9000) -> Fail:
    return Fail(
        400,
        f"This model's maximum context length is {limit} tokens. However, your messages resulted in {used} tokens.",
        code="context_length_exceeded",
        error_type="invalid_request_error",
    )
