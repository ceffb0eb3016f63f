"""The model boundary: a one-method protocol and the small value types that cross it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..messages import Message, ToolCallDict, assistant


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call as the model sent it. ``arguments`` stays the raw string: it may not be valid JSON."""

    id: str
    name: str
    arguments: str

    def to_dict(self) -> ToolCallDict:
        return {"id": self.id, "type": "function", "function": {"name": self.name, "arguments": self.arguments}}

    @classmethod
    def from_dict(cls, data: ToolCallDict) -> ToolCall:
        return cls(id=data["id"], name=data["function"]["name"], arguments=data["function"]["arguments"])


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one model call, as the endpoint reported it."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """Everything one model call needs. ``timeout`` is set by the loop from the run's deadline."""

    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_output_tokens: int | None = None
    timeout: float | None = None
    parallel_tool_calls: bool = True
    tool_choice: str | None = None  # "none": the tools stay in the request (a cache-stable prefix), none is called
    on_progress: Callable[[Any], None] | None = None  # called with a stream.Progress as chunks arrive
    cancelled: Callable[[], bool] | None = None  # True: the caller gave up (a stop): the call is closed, not retried


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One assistant turn plus what it cost."""

    text: str | None
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage | None = None
    usage_invalid: bool = False  # the server sent usage that is not whole non-negative numbers (None above)
    model: str = ""
    attempts: int = 1
    latency_ms: float = 0.0
    id: str = ""  # the endpoint's response id (chatcmpl-...)
    first_token_ms: float | None = None  # streamed: how long the server took to start answering
    failures: tuple[dict[str, Any], ...] = ()  # the attempts that failed before this one (for the run record)
    adapted: tuple[str, ...] = ()  # what this call learned of the server's dialect (one sentence each)

    def to_message(self) -> Message:
        return assistant(self.text, [call.to_dict() for call in self.tool_calls] or None)

    def to_record(self) -> dict[str, Any]:
        """The run-record entry for this call (no payload: usage, timing and shape only)."""
        return {
            "model": self.model,
            "finish_reason": self.finish_reason,
            "tool_calls": len(self.tool_calls),
            "attempts": self.attempts,
            "latency_ms": round(self.latency_ms, 1),
            "usage": None if self.usage is None else asdict(self.usage),
            **({"usage_invalid": True} if self.usage_invalid else {}),
        } | ({} if self.first_token_ms is None else {"first_token_ms": round(self.first_token_ms, 1)})


@runtime_checkable
class Model(Protocol):
    """Anything that turns a request into an assistant turn."""

    name: str

    def complete(self, request: ModelRequest) -> ModelResponse:
        """Run one model call. Raise ``ModelError`` (or a subclass) when it fails for good."""
        ...


@runtime_checkable
class DescribedModel(Model, Protocol):
    """A model whose server can say its window and count a request with its own tokenizer (OpenAIChatModel)."""

    def describe(self) -> Any:
        """A ``probe.ServerInfo``: the server's kind and its window for this model, when it says."""
        ...

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        """The request's prompt tokens as the server counts them; 0 when it cannot."""
        ...
