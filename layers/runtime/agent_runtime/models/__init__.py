"""The model boundary: a ``Model`` protocol, the OpenAI Chat Completions implementation, typed errors."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .base import Model, ModelRequest, ModelResponse, ToolCall, Usage
    from .exceptions import ContextLengthExceededError, ModelError
    from .openai_chat import OpenAIChatModel
    from .retry import RetryPolicy

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Model": ".base",
        "ModelRequest": ".base",
        "ModelResponse": ".base",
        "ToolCall": ".base",
        "Usage": ".base",
        "ContextLengthExceededError": ".exceptions",
        "ModelError": ".exceptions",
        "OpenAIChatModel": ".openai_chat",
        "RetryPolicy": ".retry",
    },
)


__all__ = [
    "ContextLengthExceededError",
    "Model",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "OpenAIChatModel",
    "RetryPolicy",
    "ToolCall",
    "Usage",
]
