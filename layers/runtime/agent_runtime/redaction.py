"""Secret values taken out of text: a tool's error, a log record, a run's record, its page and transcript.

A :class:`Redactor` replaces each value in the forms an API may echo it; making one also keeps those values out of
every log record of the process (message, arguments, extra fields, traceback) and lets ``scrub`` take them out of
what a run writes (its stored record, its traces). The values come from the integrations secret
(``toolsets.secrets`` for declared tools, the webhook and the CLI for run pages). Text is redacted whole, then cut
(``redacted`` walks a record or a history): a cut first can leave a secret's first characters, no longer found."""

from __future__ import annotations

import base64
import json
import logging
import threading
import urllib.parse
from collections.abc import Callable, Iterable, Mapping
from typing import Any


class Redactor:
    """Replaces secret values in a text with ``***``, in the forms an API may echo them: as they are,
    JSON-escaped (``/`` as ``\\/`` too), percent-encoded, and base64 (of the value, or inside ``user:value`` as Basic
    auth carries it). Making one also keeps these out of every log record of the process (a library's own
    logging, the ``mcp`` client's included, and exception tracebacks)."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values = sorted({form for v in values if len(v) >= 4 for form in encodings(v)}, key=len, reverse=True)
        _remember(self.values)

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


def redacted(value: Any, redact: Callable[[str], str]) -> Any:
    """A JSON-like value (a record, a history, a log field) with every string in it redacted: keys stay (they are
    the program's names), values are the run's text. Redacted whole, before anything is cut from it: a cut made
    first can leave a secret's start, which no redactor recognises."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, Mapping):
        return {key: redacted(item, redact) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(redacted(item, redact) for item in value)
    return value


def scrub(text: str) -> str:
    """``text`` without any secret value this process has used (every ``Redactor`` made adds its values): for what
    a run writes where no redactor of its own is at hand — its stored record, a trace, a log record."""
    for value in _KNOWN_LONGEST:
        text = text.replace(value, "***")
    return text


def scrubbed(value: Any) -> Any:
    """A JSON-like value, ``scrub``bed (returned as it is while this process knows no secret)."""
    return redacted(value, scrub) if _KNOWN_LONGEST else value


_KNOWN: set[str] = set()  # every secret value (each of its forms) this process has used
_KNOWN_LONGEST: tuple[str, ...] = ()  # the same, longest first: a form inside a longer one never breaks it
_LOCK = threading.Lock()
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


def _remember(values: Iterable[str]) -> None:
    """The first secret wraps ``logging.Logger.makeRecord``, the one place a record's message, arguments, extra
    fields (``extra=``) and exception all meet, whichever logger, handler, formatter or library made it: the record
    factory alone sees none of the extra fields (``makeRecord`` sets them after it)."""
    global _KNOWN_LONGEST
    with _LOCK:
        new = set(values) - _KNOWN
        if not new:
            return
        if not _KNOWN:
            logging.Logger.makeRecord = _redacting(logging.Logger.makeRecord)  # type: ignore[method-assign]
        _KNOWN.update(new)
        _KNOWN_LONGEST = tuple(sorted(_KNOWN, key=len, reverse=True))


def _holds(text: str) -> bool:
    return any(value in text for value in _KNOWN_LONGEST)


def _redacting(make: Callable[..., logging.LogRecord]) -> Callable[..., logging.LogRecord]:
    def make_record(self: logging.Logger, *args: Any, **kwargs: Any) -> logging.LogRecord:
        made = make(self, *args, **kwargs)
        try:
            message = made.getMessage()
        except Exception:  # a record whose arguments do not format: left for logging to report
            message = None
        if message is not None and _holds(message):
            made.msg, made.args = scrub(message), ()
        for key in made.__dict__.keys() - _STANDARD:  # the extra fields
            made.__dict__[key] = _scrubbed_field(made.__dict__[key])
        _scrub_traceback(made)
        return made

    return make_record


def _scrubbed_field(value: Any) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str | Mapping | list | tuple):
        return scrubbed(value)
    try:  # anything else is printed as its str() (Powertools' formatter, a format string)
        shown = str(value)
    except Exception:
        return value
    return scrub(shown) if _holds(shown) else value


def _scrub_traceback(made: logging.LogRecord) -> None:
    """An exception's text (an unparseable body quoting a header, in a library's ``logger.exception``) and stack
    info hold secrets too: formatted now and redacted, they join the message; every formatter prints them then."""
    parts = []
    if made.exc_info and made.exc_info[0] is not None:
        parts.append(logging.Formatter().formatException(made.exc_info))
    if made.stack_info:
        parts.append(made.stack_info)
    if not any(_holds(part) for part in parts):
        return
    made.msg, made.args = scrub("\n".join([made.getMessage(), *parts])), ()
    made.exc_info, made.exc_text, made.stack_info = None, None, None
