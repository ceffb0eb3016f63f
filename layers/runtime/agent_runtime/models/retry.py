"""Bounded retries with exponential backoff that respect ``Retry-After`` and the caller's time budget."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

import openai

from .exceptions import TEMPLATE_REFUSAL


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how long to retry a transient model failure."""

    max_attempts: int = 4
    base_delay: float = 0.5
    max_delay: float = 8.0
    max_retry_after: float = 60.0  # a server asking for longer than this is treated as "not now"

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 1)."""
        if retry_after is not None and 0 <= retry_after <= self.max_retry_after:
            return float(retry_after)
        backoff = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return backoff * (0.75 + random.random() * 0.25)  # jitter keeps parallel workers apart


# 5xx that say the request itself is the problem (llama.cpp parsing the history, a chat template raising,
# llama-cpp-python's pydantic validation: "Input should be a valid string"): the same request fails again, so
# retrying only spends the run's time.
_DETERMINISTIC_5XX = re.compile(
    r"failed to parse|parse_error|raise_exception|chat template|jinja|unable to generate parser|"
    r"input should be|valid string|validation error|extra inputs are not permitted|field required",
    re.IGNORECASE,
)


# 5xx that say the server does not do this at all (501 Not Implemented, 505 HTTP Version Not Supported): usually
# OPENAI_BASE_URL pointing at something that is no chat endpoint. Asking again gets the same answer.
NOT_THERE = (501, 505)


def is_retryable(error: Exception) -> bool:
    """429, 408, 409, 5xx, timeouts and dropped connections are worth another try; the rest are not."""
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if isinstance(error, openai.APIStatusError):
        message = error.message or ""
        if error.status_code >= 500 and (_DETERMINISTIC_5XX.search(message) or TEMPLATE_REFUSAL.search(message)):
            return False
        if error.status_code in NOT_THERE:
            return False
        return error.status_code in (408, 409, 429) or error.status_code >= 500
    return False


def retry_after_seconds(error: Exception) -> float | None:
    """The server's requested wait, from ``retry-after-ms`` or ``retry-after`` (seconds), if any."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        raw = headers.get(name)
        if raw is None:
            continue
        try:
            return float(raw) * scale
        except ValueError:
            return None  # an HTTP date: fall back to our own backoff
    return None
