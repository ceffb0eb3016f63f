"""The production model: Chat Completions through the official ``openai`` client.

Endpoint and key come from the client's own ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, so OpenAI, Azure-compatible
gateways, Ollama, vLLM and LiteLLM all work. The client's built-in retries are off: we retry here so attempts are
counted in the run record and never outlive the run's deadline.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from ..config import ENV_OPENAI_API_KEY
from .base import ModelRequest, ModelResponse, ToolCall, Usage
from .exceptions import ContextLengthExceededError, ModelError
from .retry import RetryPolicy, is_retryable, retry_after_seconds

logger = logging.getLogger(__name__)

# Servers without OpenAI's error code (vLLM, llama.cpp, some gateways) only say it in words.
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|context[_ ]length[_ ]exceeded|context window|prompt is too long|"
    r"too many (input )?tokens",
    re.IGNORECASE,
)


def _is_context_overflow(error: openai.APIStatusError) -> bool:
    if error.status_code == 413:
        return True
    if error.status_code != 400:
        return False
    return getattr(error, "code", None) == "context_length_exceeded" or bool(_OVERFLOW_TEXT.search(error.message))


class OpenAIChatModel:
    """A :class:`~agent_runtime.models.Model` backed by ``client.chat.completions.create``."""

    def __init__(
        self,
        name: str,
        *,
        client: openai.OpenAI | None = None,
        retry: RetryPolicy | None = None,
        timeout: float = 120.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.name = name
        # Local servers (Ollama, vLLM) need no key, but the client refuses to start without one.
        self._client = client or openai.OpenAI(
            api_key=os.environ.get(ENV_OPENAI_API_KEY) or "not-needed", max_retries=0
        )
        self._retry = retry or RetryPolicy()
        self._timeout = timeout
        self._sleep = sleep

    def with_name(self, name: str) -> OpenAIChatModel:
        """The same endpoint, client and retry policy for another model (e.g. a sub-agent's larger window)."""
        return OpenAIChatModel(name, client=self._client, retry=self._retry, timeout=self._timeout, sleep=self._sleep)

    def complete(self, request: ModelRequest) -> ModelResponse:
        """One call, retried on transient failures within ``request.timeout`` seconds overall."""
        started = time.monotonic()
        budget = request.timeout if request.timeout is not None else float("inf")
        attempt = 0
        while True:
            attempt += 1
            remaining = budget - (time.monotonic() - started)
            try:
                completion = self._create(request, timeout=min(self._timeout, max(remaining, 0.001)))
            except openai.APIError as error:
                delay = self._should_retry(error, attempt, budget - (time.monotonic() - started))
                if delay is None:
                    raise self._translate(error, attempt) from error
                logger.warning("attempt=<%d>, delay=<%.2f> | model call failed, retrying", attempt, delay)
                self._sleep(delay)
                continue
            return _to_response(completion, attempt, (time.monotonic() - started) * 1000)

    def _create(self, request: ModelRequest, *, timeout: float) -> ChatCompletion:
        kwargs: dict[str, Any] = {"model": self.name, "messages": request.messages, "timeout": timeout}
        if request.tools:
            kwargs["tools"] = request.tools
            kwargs["parallel_tool_calls"] = request.parallel_tool_calls
        if request.max_output_tokens:
            kwargs["max_completion_tokens"] = request.max_output_tokens
        return self._client.chat.completions.create(**kwargs)

    def _should_retry(self, error: openai.APIError, attempt: int, remaining: float) -> float | None:
        if not is_retryable(error) or attempt >= self._retry.max_attempts:
            return None
        delay = self._retry.delay(attempt, retry_after_seconds(error))
        return delay if delay < remaining else None

    def _translate(self, error: openai.APIError, attempts: int) -> ModelError:
        status = getattr(error, "status_code", None)
        if isinstance(error, openai.APIStatusError) and _is_context_overflow(error):
            return ContextLengthExceededError(
                f"the request does not fit {self.name}'s context window: {error.message}",
                status_code=status,
                attempts=attempts,
            )
        hint = {401: " (check OPENAI_API_KEY)", 403: " (check the key's permissions)", 404: " (check the model name)"}
        where = f"HTTP {status}" if status else type(error).__name__
        return ModelError(
            f"model {self.name!r} failed after {attempts} attempt(s): {where}{hint.get(status or 0, '')}: "
            f"{error.message}",
            status_code=status,
            attempts=attempts,
        )


def _to_response(completion: ChatCompletion, attempts: int, latency_ms: float) -> ModelResponse:
    if not completion.choices:
        raise ModelError("the model returned no choices", attempts=attempts)
    choice = completion.choices[0]
    calls = tuple(
        ToolCall(id=call.id or f"call_{index}", name=call.function.name, arguments=call.function.arguments or "")
        for index, call in enumerate(choice.message.tool_calls or [])
        if call.type == "function"
    )
    return ModelResponse(
        text=choice.message.content,
        tool_calls=calls,
        finish_reason=choice.finish_reason or "stop",
        usage=_usage(completion),
        model=completion.model,
        attempts=attempts,
        latency_ms=latency_ms,
    )


def _usage(completion: ChatCompletion) -> Usage | None:
    usage = completion.usage
    if usage is None:
        return None
    details = usage.prompt_tokens_details
    return Usage(
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        total_tokens=usage.total_tokens,
        cached_tokens=(details.cached_tokens or 0) if details else 0,
    )
