"""A streamed reply put back together: text, tool calls from their deltas, usage from the last chunk.

Streaming is what makes slow servers usable: the idle timeout is between chunks (a CPU server writing 5 tokens a
second never times out while it writes), progress can be shown while tokens arrive, and closing the connection
stops the server generating (llama.cpp and vLLM stop a request whose client went away; an abandoned
non-streamed request keeps a one-slot server busy until it finishes).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .base import ToolCall, Usage


class MalformedReplyError(Exception):
    """A 200 whose body is not a usable chat completion (worth another attempt: proxies and overloaded servers)."""


@dataclass(frozen=True, slots=True)
class Progress:
    """What a streaming call has received so far: for a live trace, or a chat's "working…" message."""

    elapsed: float  # seconds since the request was sent
    tokens: int  # text and argument deltas received (about a token each)
    tool_calls: int  # calls begun so far
    prompt: tuple[int, int] | None = None  # (processed, total) prompt tokens, when the server says (llama.cpp)
    writing: str = ""  # "answer" or the name of the tool being called
    delta: str = ""  # the reply's text since the last report (what a chat can stream as it is written)
    attempt: int = 1  # of the call: a new one starts its text again (what a failed attempt wrote never counted)


ProgressCallback = Callable[[Progress], None]


@dataclass(slots=True)
class _Call:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Assembler:
    """Feed chunks (dicts, as parsed from the server's events) in order; read the reply at the end."""

    started: float = field(default_factory=time.monotonic)
    attempt: int = 1  # which attempt of the call this reply is (its progress says so)
    text: list[str] = field(default_factory=list)
    calls: dict[int, _Call] = field(default_factory=dict)
    finish_reason: str | None = None
    usage: Usage | None = None
    usage_invalid: bool = False  # the server sent usage that is not whole non-negative numbers: it is estimated
    model: str = ""
    id: str = ""
    tokens: int = 0
    first_token: float | None = None
    prompt: tuple[int, int] | None = None
    reported: int = 0  # text pieces already handed out by progress()
    answering: bool = False  # the server accepted the request and began its reply (a cut attempt may be billed)

    def add(self, chunk: dict[str, Any]) -> None:
        self.model = self.model or str(chunk.get("model") or "")
        self.id = self.id or str(chunk.get("id") or "")
        if isinstance(chunk.get("usage"), dict):
            self.usage = usage_of(chunk["usage"])
            self.usage_invalid = self.usage is None
        progress = chunk.get("prompt_progress")
        if isinstance(progress, dict) and isinstance(progress.get("total"), int):
            self.prompt = (int(progress.get("processed") or 0), int(progress["total"]))
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue  # one choice is asked for; others are not ours
            self.finish_reason = choice.get("finish_reason") or self.finish_reason
            self._delta(choice.get("delta") or choice.get("message") or {})

    def _delta(self, delta: dict[str, Any]) -> None:
        if isinstance(delta.get("content"), str) and delta["content"]:
            self.text.append(delta["content"])
            self._token()
        for position, part in enumerate(delta.get("tool_calls") or []):
            index = part.get("index") if isinstance(part.get("index"), int) else len(self.calls) + position
            call = self.calls.setdefault(index, _Call())
            call.id = call.id or str(part.get("id") or "")
            function = part.get("function") or {}
            call.name = call.name or str(function.get("name") or "")
            if function.get("arguments"):
                call.arguments.append(str(function["arguments"]))
                self._token()

    def _token(self) -> None:
        self.tokens += 1
        if self.first_token is None:
            self.first_token = time.monotonic()

    def progress(self) -> Progress:
        writing = next((c.name for c in reversed(self.calls.values()) if c.name), "answer" if self.text else "")
        delta, self.reported = "".join(self.text[self.reported :]), len(self.text)
        elapsed = time.monotonic() - self.started
        return Progress(elapsed, self.tokens, len(self.calls), self.prompt, writing, delta, self.attempt)

    def tool_calls(self) -> tuple[ToolCall, ...]:
        calls = []
        for index in sorted(self.calls):
            call = self.calls[index]
            if not call.name:
                raise MalformedReplyError(f"tool call {index} of the reply has no function name")
            calls.append(ToolCall(id=call.id, name=call.name, arguments="".join(call.arguments)))
        return tuple(calls)

    def content(self) -> str | None:
        return "".join(self.text) if self.text else None

    def first_token_ms(self) -> float | None:
        return None if self.first_token is None else (self.first_token - self.started) * 1000


def usage_of(data: dict[str, Any]) -> Usage | None:
    """The usage a server reported; None when it is not whole non-negative numbers (negative, fractional, text:
    gateways that rewrite bodies send all three), so the call is charged an estimate instead."""
    details = data.get("prompt_tokens_details") or {}
    values = [data.get("prompt_tokens"), data.get("completion_tokens"), data.get("total_tokens"),
              details.get("cached_tokens") if isinstance(details, dict) else 0]  # fmt: skip
    counts = [0 if value is None else _count(value) for value in values]
    if any(count is None for count in counts):
        return None
    prompt, completion, total, cached = (int(count or 0) for count in counts)
    if cached > prompt:
        return None
    return Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=total, cached_tokens=cached)


def _count(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if value >= 0 and value == int(value) else None
