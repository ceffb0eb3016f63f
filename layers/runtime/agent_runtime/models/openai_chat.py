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
from typing import Any, cast

import openai
from openai.types.chat import ChatCompletion

from ..config import ENV_OPENAI_API_KEY
from .base import ModelRequest, ModelResponse, ToolCall, Usage
from .exceptions import ContextLengthExceededError, ModelError
from .retry import RetryPolicy, is_retryable, retry_after_seconds

logger = logging.getLogger(__name__)

# Servers without OpenAI's error code only say it in words: vLLM ("maximum context length is N tokens. However,
# you requested M tokens", "maximum model length"), llama.cpp (type exceed_context_size_error: "request (M tokens)
# exceeds the available context size (N tokens)"), LiteLLM (ContextWindowExceededError), Anthropic-style gateways.
_OVERFLOW_TEXT = re.compile(
    r"maximum context length|context[_ ]length[_ ]exceeded|context window|prompt is too long|"
    r"too many (input )?tokens|exceeds? the available context size|exceed_context_size|maximum model length|"
    r"input tokens exceed|ContextWindowExceeded",
    re.IGNORECASE,
)
# The server's own numbers, when its message says them: (prompt tokens, window).
_PROMPT_TOKENS = re.compile(
    r"resulted in (\d+) tokens|request \((\d+) tokens\)|\((\d+) in the messages|request has (\d+) input tokens|"
    r"prompt \(length (\d+)\)",
    re.IGNORECASE,
)
_WINDOW_TOKENS = re.compile(
    r"maximum context length is (\d+)|context size \((\d+) tokens\)|limit of (\d+) tokens|"
    r"maximum model length of (\d+)",
    re.IGNORECASE,
)


def _is_context_overflow(error: openai.APIStatusError) -> bool:
    if error.status_code == 413:
        return True
    if error.status_code not in (400, 500):  # some servers answer an overflow with a 500
        return False
    if getattr(error, "code", None) in ("context_length_exceeded", "exceed_context_size_error"):
        return True
    body = error.body if isinstance(error.body, dict) else {}
    return bool(_OVERFLOW_TEXT.search(f"{error.message} {body.get('type', '')}"))


def overflow_numbers(error: openai.APIStatusError) -> tuple[int | None, int | None]:
    """(prompt tokens, window) as the server counted them, from llama.cpp's fields or the message's words."""
    body: dict[str, Any] = error.body if isinstance(error.body, dict) else {}
    nested = body.get("error")
    inner: dict[str, Any] = nested if isinstance(nested, dict) else body
    prompt, window = inner.get("n_prompt_tokens"), inner.get("n_ctx")
    if isinstance(prompt, int) and isinstance(window, int):
        return prompt, window
    return _first_number(_PROMPT_TOKENS, error.message), _first_number(_WINDOW_TOKENS, error.message)


def _first_number(pattern: re.Pattern[str], text: str) -> int | None:
    found = pattern.search(text or "")
    return None if found is None else int(next(group for group in found.groups() if group))


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

    @property
    def endpoint(self) -> str:
        """The server's base URL (what a calibration of its token counts belongs to)."""
        return str(self._client.base_url)

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
            failure: Exception
            try:
                completion = self._create(request, timeout=min(self._timeout, max(remaining, 0.001)))
                return _to_response(completion, attempt, (time.monotonic() - started) * 1000)
            except ValueError as error:  # a 200 whose body is not JSON (a proxy's error page)
                failure = MalformedReplyError(f"the reply body is not JSON ({error})")
            except (openai.APIError, MalformedReplyError) as error:
                failure = error
            delay = self._should_retry(failure, attempt, budget - (time.monotonic() - started))
            if delay is None:
                raise self._translate(failure, attempt) from failure
            logger.warning("attempt=<%d>, delay=<%.2f> | model call failed, retrying", attempt, delay)
            self._sleep(delay)

    def _create(self, request: ModelRequest, *, timeout: float) -> ChatCompletion:
        kwargs: dict[str, Any] = {"model": self.name, "messages": request.messages, "timeout": timeout}
        if request.tools:
            kwargs["tools"] = request.tools
            kwargs["parallel_tool_calls"] = request.parallel_tool_calls
            if request.tool_choice is not None:
                kwargs["tool_choice"] = request.tool_choice
        if request.max_output_tokens:
            kwargs["max_completion_tokens"] = request.max_output_tokens
        # Not always a ChatCompletion: some servers' non-JSON bodies come back as text (see _to_response).
        return cast(ChatCompletion, self._client.chat.completions.create(**kwargs))

    def _should_retry(self, error: Exception, attempt: int, remaining: float) -> float | None:
        retryable = isinstance(error, MalformedReplyError) or is_retryable(error)
        if not retryable or attempt >= self._retry.max_attempts:
            return None
        delay = self._retry.delay(attempt, retry_after_seconds(error))
        return delay if delay < remaining else None

    def _translate(self, error: Exception, attempts: int) -> ModelError:
        if isinstance(error, MalformedReplyError):
            return ModelError(f"model {self.name!r} failed after {attempts} attempt(s): {error}", attempts=attempts)
        assert isinstance(error, openai.APIError)
        status = getattr(error, "status_code", None)
        if isinstance(error, openai.APIStatusError) and _is_context_overflow(error):
            prompt, window = overflow_numbers(error)
            return ContextLengthExceededError(
                f"the request does not fit {self.name}'s context window: {error.message}",
                status_code=status,
                attempts=attempts,
                prompt_tokens=prompt,
                window=window,
            )
        hint = {401: " (check OPENAI_API_KEY)", 403: " (check the key's permissions)", 404: " (check the model name)"}
        where = f"HTTP {status}" if status else type(error).__name__
        return ModelError(
            f"model {self.name!r} failed after {attempts} attempt(s): {where}{hint.get(status or 0, '')}: "
            f"{error.message}",
            status_code=status,
            attempts=attempts,
        )


class MalformedReplyError(Exception):
    """A 200 whose body is not a usable chat completion (worth another attempt: proxies and overloaded servers)."""


def _to_response(completion: ChatCompletion, attempts: int, latency_ms: float) -> ModelResponse:
    if not isinstance(completion, ChatCompletion):  # the client hands back the raw text of a non-JSON body
        raise MalformedReplyError(f"the reply is not a chat completion: {str(completion)[:80]!r}")
    if not completion.choices or completion.choices[0].message is None:
        raise MalformedReplyError("the reply has no message (no choices, or a null message)")
    choice = completion.choices[0]
    message = choice.message
    calls = []
    for index, call in enumerate(message.tool_calls or []):
        if call.type != "function":
            continue
        if call.function is None or not call.function.name:
            raise MalformedReplyError(f"tool call {index} of the reply has no function name")
        calls.append(ToolCall(id=call.id or "", name=call.function.name, arguments=call.function.arguments or ""))
    return ModelResponse(
        text=message.content,
        tool_calls=tuple(calls),
        finish_reason=choice.finish_reason or "stop",
        usage=_usage(completion),
        model=completion.model,
        attempts=attempts,
        latency_ms=latency_ms,
        id=str(completion.id or ""),
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
