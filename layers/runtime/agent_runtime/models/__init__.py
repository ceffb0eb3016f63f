"""The model boundary: a ``Model`` protocol, the OpenAI Chat Completions implementation, typed errors."""

from __future__ import annotations

from .base import Model, ModelRequest, ModelResponse, ToolCall, Usage
from .exceptions import ContextLengthExceededError, ModelError
from .openai_chat import OpenAIChatModel
from .retry import RetryPolicy

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
