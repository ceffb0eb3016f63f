"""Secret values taken out of text: a tool's error, a log record, a run's page.

A :class:`Redactor` replaces each value in the forms an API may echo it; making one also keeps those values out of
every log record of the process. The values come from the integrations secret (``toolsets.secrets`` for declared
tools, the webhook and the CLI for run pages)."""

from __future__ import annotations

import base64
import json
import logging
import threading
import urllib.parse
from collections.abc import Callable, Iterable


class Redactor:
    """Replaces secret values in a text with ``***``, in the forms an API may echo them: as they are,
    JSON-escaped (``/`` as ``\\/`` too), percent-encoded, and base64 (of the value, or inside ``user:value`` as Basic
    auth carries it). Making one also keeps these out of every log record of the process (a library's own
    logging, the ``mcp`` client's included, and exception tracebacks)."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values = sorted({form for v in values if len(v) >= 4 for form in encodings(v)}, key=len, reverse=True)
        _redact_logs(self.values)

    def __call__(self, text: str) -> str:
        for value in self.values:
            text = text.replace(value, "***")
        return text

    def data(self, data: bytes) -> bytes:
        """A file a tool saves (a binary response), with the same forms taken out of its bytes."""
        for value in self.values:
            data = data.replace(value.encode("utf-8"), b"***")
        return data


def encodings(value: str) -> set[str]:
    """The forms of ``value`` an echo may carry (at least 4 characters each, so nothing short is replaced)."""
    raw = value.encode("utf-8")
    forms = {value, json.dumps(value)[1:-1], json.dumps(value, ensure_ascii=False)[1:-1]}
    forms |= {form.replace("/", "\\/") for form in list(forms)}
    forms |= {urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value), urllib.parse.quote(value)}
    for offset in range(3):  # base64 of the value after 0-2 bytes of anything ("user:"): the part it alone sets
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            encoded = encode(b"\0" * offset + raw).decode("ascii").rstrip("=")
            start = 4 if offset else 0
            end = len(encoded) - (len(encoded) % 4 or 4) if (offset + len(raw)) % 3 else len(encoded)
            forms.add(encoded[start:end])
    return {form for form in forms if len(form) >= 4}


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
            made.msg, made.args = _scrubbed(message), ()
        _scrub_traceback(made)
        return made

    return record


def _scrubbed(text: str) -> str:
    for value in sorted(_LOGGED, key=len, reverse=True):
        text = text.replace(value, "***")
    return text


def _scrub_traceback(made: logging.LogRecord) -> None:
    """An exception's text (an unparseable body quoting a header, in a library's ``logger.exception``) and stack
    info hold secrets too: formatted now and redacted, they join the message; every formatter prints them then."""
    parts = []
    if made.exc_info and made.exc_info[0] is not None:
        parts.append(logging.Formatter().formatException(made.exc_info))
    if made.stack_info:
        parts.append(made.stack_info)
    if not any(value in part for part in parts for value in _LOGGED):
        return
    made.msg, made.args = _scrubbed("\n".join([made.getMessage(), *parts])), ()
    made.exc_info, made.exc_text, made.stack_info = None, None, None
