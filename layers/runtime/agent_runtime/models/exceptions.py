"""Errors at the model boundary."""

from __future__ import annotations

import re
from typing import Any

from ..errors import RunError

# What chat templates say when they refuse a system message that is not the first (Qwen: "System message must
# be at the beginning."; Llama 2 / Mistral: "Conversation roles must alternate user/assistant/..."): the same
# request fails again (not worth a retry), and the context engine can move its status to a user message.
TEMPLATE_REFUSAL = re.compile(
    r"system message must be at the beginning|roles must alternate|system message.{0,40}(first|beginning)|"
    r"only one system message|system role (is )?not supported",
    re.IGNORECASE,
)


class ModelError(RunError):
    """The model endpoint failed for good (after retries, or with a non-retryable status)."""

    def __init__(self, message: str, *, status_code: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.attempts = attempts
        self.failures: list[dict[str, Any]] = []  # every failed attempt, for the run record (set by the model)


class ContextLengthExceededError(ModelError):
    """The request did not fit the model's window; the context engine can shrink the window and retry.

    ``prompt_tokens`` and ``window`` are the server's own numbers when its error says them (OpenAI, vLLM,
    llama.cpp do): the engine calibrates its count with them instead of guessing."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        attempts: int = 1,
        prompt_tokens: int | None = None,
        window: int | None = None,
    ) -> None:
        super().__init__(message, status_code=status_code, attempts=attempts)
        self.prompt_tokens = prompt_tokens
        self.window = window
