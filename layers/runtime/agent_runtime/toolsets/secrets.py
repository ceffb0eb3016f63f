"""Secrets in a declared source's headers or URL: ``${secret:NAME}``.

A value comes from the integrations secret (Secrets Manager, cached) in AWS and from the upper-case environment
variable locally. It goes into HTTP headers (or a URL) and nowhere else: every error text a source builds passes
through its ``Redactor`` before the model, a log or the run record can see it.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable, Iterable, Mapping

from .exceptions import SecretMissingError
from .settings import SECRET_REF

Secrets = Callable[[str], str | None]


def env_secret(name: str) -> str | None:
    """Locally a secret is the upper-case environment variable (``notion_token`` → ``NOTION_TOKEN``)."""
    return os.environ.get(name.upper()) or None


class Redactor:
    """Replaces secret values in a text with ``***``. Making one also keeps its values out of every log record
    of the process (a library's own logging, the ``mcp`` client's included)."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values = sorted({v for v in values if len(v) >= 4}, key=len, reverse=True)
        _redact_logs(self.values)

    def __call__(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "***")
        return text


_LOGGED: set[str] = set()  # every secret value this process has used: no log record may carry one
_LOG_LOCK = threading.Lock()


def _redact_logs(values: Iterable[str]) -> None:
    """Log records are made through a factory: wrapped once, it redacts any record whose message holds a secret
    value, whichever logger, handler or library made it."""
    with _LOG_LOCK:
        if not _LOGGED:
            logging.setLogRecordFactory(_redacting(logging.getLogRecordFactory()))
        _LOGGED.update(values)


def _redacting(make: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def record(*args: object, **kwargs: object) -> logging.LogRecord:
        made = make(*args, **kwargs)
        try:
            message = made.getMessage()
        except Exception:  # a record whose arguments do not format: left for logging to report
            return made
        if any(value in message for value in _LOGGED):
            for value in sorted(_LOGGED, key=len, reverse=True):
                message = message.replace(value, "***")
            made.msg, made.args = message, ()
        return made

    return record


def expand(value: str, secrets: Secrets, where: str, used: list[str]) -> str:
    """``${secret:NAME}`` replaced by its value; a missing one is a configuration error naming the tool."""

    def one(match: re.Match[str]) -> str:
        name = match.group(1)
        secret = secrets(name)
        if not secret:
            raise SecretMissingError(
                f"{where}: secret {name!r} is not set (the integrations secret's key {name!r} in AWS, "
                f"the environment variable {name.upper()} locally)"
            )
        used.append(secret)
        return secret

    return SECRET_REF.sub(one, value)


def expand_headers(headers: Mapping[str, str], secrets: Secrets, where: str, used: list[str]) -> dict[str, str]:
    return {key: expand(value, secrets, f"{where} header {key}", used) for key, value in headers.items()}
