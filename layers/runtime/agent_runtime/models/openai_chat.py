"""The production model: Chat Completions through the official ``openai`` client, streamed.

Endpoint and key come from the client's own ``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, so OpenAI, Azure-compatible
gateways, llama.cpp, vLLM, Ollama and LiteLLM all work; what each of them accepts is the endpoint's dialect
(``dialect.py``). Replies are streamed: ``timeout`` is the longest the server may stay silent (time to the first
token included), not a limit on the whole reply, and a call abandoned for any reason closes its connection, which
stops the server generating. The client's built-in retries are off: we retry here so every attempt is in the run
record and none outlives the run's deadline.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import openai
from openai.types.chat import ChatCompletion

from ..config import ENV_OPENAI_API_KEY, check_base_url
from ..messages import Message
from .base import ModelRequest, ModelResponse
from .dialect import Dialect, dialect_for
from .exceptions import ContextLengthExceededError, ModelError
from .overflow import is_context_overflow, overflow_numbers
from .probe import ServerInfo, count_tokens, probe
from .retry import NOT_THERE, RetryPolicy, is_retryable, retry_after_seconds
from .sse import Bounds, OversizedReplyError, SilentStreamError, events, read_body
from .stream import Assembler, MalformedReplyError

logger = logging.getLogger(__name__)
CONNECT_TIMEOUT = 10.0
MAX_ADAPTATIONS = 4  # request shapes tried per call after refusals (each dialect change happens once)
MAX_ERROR_CHARS = 200  # of a failed attempt's error, in the run record
MAX_MESSAGE_CHARS = 1_000  # of a failed call's error, in its reason (a server's body can be 200 KB)
MAX_ATTEMPT_FACTOR = 15  # an attempt ends within this many idle timeouts (30 min at the default 120 s)
CANCEL_POLL = 1.0  # seconds between asks whether the caller gave up on a call in flight (a stop)


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
        if client is None:
            check_base_url(os.environ)
        # Local servers (Ollama, vLLM) need no key, but the client refuses to start without one.
        self._client = client or openai.OpenAI(
            api_key=os.environ.get(ENV_OPENAI_API_KEY) or "not-needed", max_retries=0
        )
        self._retry = retry or RetryPolicy()
        self._timeout = timeout  # the longest the server may stay silent (streamed), or a whole call (not)
        self._sleep = sleep
        self.dialect: Dialect = dialect_for(self.endpoint, name)

    @property
    def endpoint(self) -> str:
        """The server's base URL (what a calibration of its token counts belongs to)."""
        return str(self._client.base_url)

    def describe(self) -> ServerInfo:
        """What the server says about itself (its window for this model), asked once per process."""
        info = probe(self._client, self.name)
        self.dialect.progress = info.kind == "llama.cpp"  # prompt progress while streaming: time-to-first-token
        return info

    def count_tokens(self, messages: list[Message], tools: list[dict[str, Any]]) -> int:
        """The prompt tokens of a request as the server counts them (0: it cannot say)."""
        return count_tokens(self._client, self.describe(), self.name, self.dialect.messages(messages), tools)

    def with_name(self, name: str) -> OpenAIChatModel:
        """The same endpoint, client and retry policy for another model (e.g. a sub-agent's larger window)."""
        return OpenAIChatModel(name, client=self._client, retry=self._retry, timeout=self._timeout, sleep=self._sleep)

    def complete(self, request: ModelRequest) -> ModelResponse:
        """One call, retried on transient failures within ``request.timeout`` seconds overall; a refusal the
        endpoint's dialect can answer (a parameter, a message shape) is retried at once in the new shape."""
        started = time.monotonic()
        budget = request.timeout if request.timeout is not None else float("inf")
        attempt, failures, adapted = 0, list[dict[str, Any]](), list[str]()
        while True:
            attempt += 1
            began = time.monotonic()
            body = self.dialect.body(self.name, request)
            reply = Assembler(attempt=attempt)
            failure: Exception
            try:
                self._attempt(body, reply, request, budget - (began - started))
                return self._response(reply, attempt, started, failures, adapted)
            except ValueError as error:  # a 200 whose body is not JSON (a proxy's error page)
                failure = MalformedReplyError(f"the reply body is not JSON ({error})")
            except (openai.APIError, MalformedReplyError) as error:
                failure = error
            failures.append(self._failed(failure, attempt, began, reply))
            change = self._adapt(failure, body) if len(adapted) < MAX_ADAPTATIONS else None
            if change is not None:
                adapted.append(change)
                logger.warning("model=<%s>, change=<%s> | the server refused the request's shape", self.name, change)
                continue
            cancelled = request.cancelled is not None and request.cancelled()
            delay = None if cancelled else self._should_retry(failure, attempt, budget - (time.monotonic() - started))
            if delay is None:
                failed = self._translate(failure, attempt)
                failed.failures = failures
                raise failed from failure
            status = getattr(failure, "status_code", None)  # never the message: a server may echo the request in it
            why = f"HTTP {status}" if status else type(failure).__name__
            logger.warning("attempt=<%d>, delay=<%.2f>, why=<%s> | model call failed, retrying", attempt, delay, why)
            self._sleep(delay)

    def _attempt(self, body: dict[str, Any], reply: Assembler, request: ModelRequest, remaining: float) -> None:
        """One request, read within bounds (``sse.py``); ``reply`` holds what arrived, also when it fails part way.
        The attempt as a whole ends within MAX_ATTEMPT_FACTOR idle timeouts, also for a run with no deadline."""
        quiet = min(self._timeout, max(remaining, 0.001))
        timeout = openai.Timeout(quiet, connect=min(quiet, CONNECT_TIMEOUT))
        bounds = Bounds.for_reply(request.max_output_tokens, quiet)
        limit = min(remaining, self._timeout * MAX_ATTEMPT_FACTOR)
        if not body.get("stream"):
            self._whole_reply(body, reply, timeout, bounds, (limit, request.cancelled))
            return
        stream = self._client.chat.completions.create(**body, timeout=timeout)
        response = stream.response
        reply.answering = True
        # Closing the response is what stops the server: on the deadline (from another thread), on any error.
        with stream, _closed_after(limit, response.close, request.cancelled):
            if "event-stream" not in response.headers.get("content-type", ""):  # the server did not stream
                reply.add(_whole(json.loads(read_body(_bytes(response), bounds.max_bytes) or b"null")))
                return
            try:
                for chunk in events(_bytes(response), bounds):
                    _check_error(chunk, response)
                    reply.add(chunk if isinstance(chunk, dict) else {})
                    _report(request, reply)
            except SilentStreamError as error:
                raise openai.APITimeoutError(request=response.request) from error
        if reply.finish_reason is None and reply.content() is None and not reply.calls:
            raise MalformedReplyError("the stream ended without a reply")

    def _whole_reply(
        self,
        body: dict[str, Any],
        reply: Assembler,
        timeout: openai.Timeout,
        bounds: Bounds,
        limit: tuple[float, Callable[[], bool] | None],
    ) -> None:
        """A request the endpoint answers whole (streaming off in its dialect), its body read within bounds."""
        raw_reply = self._client.chat.completions.with_streaming_response.create(**body, timeout=timeout)
        with raw_reply as raw, _closed_after(limit[0], raw.http_response.close, limit[1]):
            data = read_body(_bytes(raw.http_response), bounds.max_bytes)
        reply.add(_whole(json.loads(data or b"null")))

    def _response(
        self, reply: Assembler, attempt: int, started: float, failures: list[dict[str, Any]], adapted: list[str]
    ) -> ModelResponse:
        return ModelResponse(
            text=reply.content(),
            tool_calls=reply.tool_calls(),
            finish_reason=reply.finish_reason or "stop",
            usage=reply.usage,
            usage_invalid=reply.usage_invalid,
            model=reply.model,
            attempts=attempt,
            latency_ms=(time.monotonic() - started) * 1000,
            id=reply.id,
            first_token_ms=reply.first_token_ms() if self.dialect.stream else None,
            failures=tuple(failures),
            adapted=tuple(adapted),
        )

    def _failed(self, error: Exception, attempt: int, began: float, reply: Assembler) -> dict[str, Any]:
        """A failed attempt as the run record keeps it: no payload, the error's first words."""
        status = getattr(error, "status_code", None)
        what = f"HTTP {status}: {getattr(error, 'message', '')}" if status else f"{type(error).__name__}: {error}"
        return {
            "model": self.name,
            "outcome": "failed",
            "attempts": attempt,
            "error": what[:MAX_ERROR_CHARS],
            "latency_ms": round((time.monotonic() - began) * 1000, 1),
            "received_tokens": reply.tokens,
            **({"billable": True} if reply.answering and status is None else {}),  # begun, then cut: billed
            "usage": None,
        }

    def _adapt(self, error: Exception, body: dict[str, Any]) -> str | None:
        if not isinstance(error, openai.APIStatusError) or is_context_overflow(error):
            return None
        return self.dialect.adapt(error, body)

    def _should_retry(self, error: Exception, attempt: int, remaining: float) -> float | None:
        if isinstance(error, OversizedReplyError):  # the endpoint would do it again
            return None
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
        if isinstance(error, openai.APIStatusError) and is_context_overflow(error):
            prompt, window = overflow_numbers(error)
            return ContextLengthExceededError(
                f"the request does not fit {self.name}'s context window: {error.message}",
                status_code=status,
                attempts=attempts,
                prompt_tokens=prompt,
                window=window,
            )
        hint = _hint(error)
        said = error.message if len(error.message) <= MAX_MESSAGE_CHARS else error.message[:MAX_MESSAGE_CHARS] + "…"
        where = f"HTTP {status}" if status else type(error).__name__
        if isinstance(error, openai.APITimeoutError):
            where = f"no reply for {self._timeout:.0f}s (AGENT_MODEL_TIMEOUT_SECONDS) or the run's deadline"
        elif isinstance(error, openai.APIConnectionError):
            where = (
                f"cannot connect to {self.endpoint} (check OPENAI_BASE_URL, and that the server runs and listens there)"
            )
            said = str(error.__cause__ or said)[:MAX_MESSAGE_CHARS]
        return ModelError(
            f"model {self.name!r} failed after {attempts} attempt(s): {where}{hint}: {said}",
            status_code=status,
            attempts=attempts,
        )


def _hint(error: openai.APIError) -> str:
    """What to check for a refusal a setting explains: a 404 is as often OPENAI_BASE_URL without its /v1 as a model
    name (the URL called tells which), a 501 an endpoint that is no chat server."""
    status = getattr(error, "status_code", None)
    called = f"called {error.request.url}" if getattr(error, "request", None) is not None else ""
    if status == 404:
        return f" (check the model name, or OPENAI_BASE_URL: missing its /v1? {called})"
    if status in NOT_THERE:
        return f" (not retried: the server does not do this; check OPENAI_BASE_URL, {called})"
    return {401: " (check OPENAI_API_KEY)", 403: " (check the key's permissions)"}.get(status or 0, "")


def _whole(completion: Any) -> dict[str, Any]:
    """A non-streamed reply as a dict, checked: the client hands back the raw text of a non-JSON body."""
    if isinstance(completion, ChatCompletion):
        data: Any = completion.to_dict()
    elif isinstance(completion, dict) and "choices" in completion:
        data = completion
    else:
        raise MalformedReplyError(f"the reply is not a chat completion: {str(completion)[:80]!r}")
    choices = data.get("choices") or []
    if not choices or not isinstance(choices[0], dict) or not isinstance(choices[0].get("message"), dict):
        raise MalformedReplyError("the reply has no message (no choices, or a null message)")
    return dict(data)


def _bytes(response: Any) -> Iterator[bytes]:
    """The response's bytes; its transport's errors become the client's own (retried and said as before)."""
    from openai._httpx2 import request_exceptions, timeout_exceptions  # the client's own mapping

    try:
        yield from response.iter_bytes()
    except timeout_exceptions() as error:
        raise openai.APITimeoutError(request=response.request) from error
    except (*request_exceptions(), _closed()) as error:  # closed: the deadline or a stop closed it before a byte
        raise openai.APIConnectionError(request=response.request) from error


def _closed() -> type[Exception]:
    """What the transport raises when the response was closed before it was read (``_closed_after`` closing it
    just as reading starts): a cut like any other, not an internal error."""
    import httpx2

    return httpx2.StreamClosed


def _check_error(chunk: Any, response: Any) -> None:
    """A chunk that carries an error (a server that fails mid-stream) ends the attempt with it."""
    if isinstance(chunk, dict) and chunk.get("error"):
        error = chunk["error"]
        message = error.get("message") if isinstance(error, dict) else None
        raise openai.APIError(
            str(message or "the server failed mid-stream")[:MAX_MESSAGE_CHARS], request=response.request, body=error
        )


def _report(request: ModelRequest, reply: Assembler) -> None:
    if request.on_progress is None:
        return
    try:
        request.on_progress(reply.progress())
    except Exception:  # progress is cosmetic: a failing display never fails the call
        logger.debug("the progress callback failed", exc_info=True)


@contextmanager
def _closed_after(
    seconds: float, close: Callable[[], None], cancelled: Callable[[], bool] | None = None
) -> Iterator[None]:
    """Calls ``close`` if the block is still running after ``seconds`` (the run's deadline), or as soon as
    ``cancelled`` says so (asked every CANCEL_POLL seconds, from a watcher thread: a silent server too)."""
    if seconds == float("inf") and cancelled is None:
        yield
        return
    done = threading.Event()
    until = time.monotonic() + max(seconds, 0.0)

    def watch() -> None:
        while not done.wait(min(CANCEL_POLL, max(until - time.monotonic(), 0.0))):
            if time.monotonic() >= until or (cancelled is not None and cancelled()):
                close()
                return

    watcher = threading.Thread(target=watch, daemon=True, name="model-call-watch")
    watcher.start()
    try:
        yield
    finally:
        done.set()
