"""Errors at the model boundary."""

from __future__ import annotations

from ..errors import RunError


class ModelError(RunError):
    """The model endpoint failed for good (after retries, or with a non-retryable status)."""

    def __init__(self, message: str, *, status_code: int | None = None, attempts: int = 1) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.attempts = attempts


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
