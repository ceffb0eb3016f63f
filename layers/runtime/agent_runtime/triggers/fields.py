"""The one parser of what an unauthenticated request says, used before anything else reads a field of it.

Headers, query fields and path parts are text anyone can write, and Python's own readers are not strict enough
for it: ``str.isdigit`` is true of ``²`` and ``①``, which ``int`` refuses; ``int`` refuses more than 4,300 digits
and takes ``" 1_0 "``; ``hmac.compare_digest`` raises on non-ASCII text. Every route (Slack's and JIRA's, the
signed webhooks, ``/runs``, a run page's link, ``serve``'s framing) reads such a field through one of these:
ASCII only, bounded in length, a number within its range. Anything else is a :class:`FieldError` with the
route's documented status (401 by default: a field that does not parse cannot authenticate anything), never an
exception that would answer 500 — or, under ``serve``, drop the connection."""

from __future__ import annotations

import hmac
import re

from .exceptions import RejectedRequest

DIGEST = re.compile(r"[0-9a-f]{64}")  # a SHA-256 HMAC as every sender here writes it: lowercase hex
_PRINTABLE = re.compile(r"[\x20-\x7e]+")
UNIX_TIME_HIGH = 99_999_999_999  # 11 digits: seconds until the year 5138


class FieldError(RejectedRequest):
    """A field of an unauthenticated request that is missing or not what it must be: which, and what it must be
    (never its value, which anyone wrote)."""

    def __init__(self, name: str, must: str, status: int = 401) -> None:
        super().__init__(status, f"{name} is missing" if not must else f"{name} must be {must}")


def number(value: object, name: str, *, high: int, low: int = 0, status: int = 401) -> int:
    """A whole number written in ASCII digits (no sign, space, underscore or other script's digits), at most as
    many as ``high`` has, from ``low`` to ``high``."""
    if value is None or value == "":
        raise FieldError(name, "", status)
    digits = len(str(high))
    if not (isinstance(value, str) and len(value) <= digits and value.isascii() and value.isdigit()):
        raise FieldError(name, f"a whole number of at most {digits} ASCII digits", status)
    parsed = int(value)
    if not low <= parsed <= high:
        raise FieldError(name, f"a number from {low} to {high}", status)
    return parsed


def token(value: object, name: str, pattern: re.Pattern[str], *, status: int = 401) -> str:
    """ASCII text the whole of which ``pattern`` matches (the pattern bounds its length)."""
    if value is None or value == "":
        raise FieldError(name, "", status)
    if not (isinstance(value, str) and value.isascii() and pattern.fullmatch(value)):
        raise FieldError(name, f"ASCII matching {pattern.pattern}", status)
    return value


def signature(value: object, name: str, *, prefix: str = "sha256=", status: int = 401) -> str:
    """``prefix`` and an HMAC-SHA256 in lowercase hex: what the route then compares with :func:`same`."""
    if value is None or value == "":
        raise FieldError(name, "", status)
    if not (isinstance(value, str) and value.startswith(prefix) and DIGEST.fullmatch(value[len(prefix) :])):
        raise FieldError(name, f"{prefix}<64 lowercase hex digits>", status)
    return value


def text(value: object, name: str, *, longest: int = 4_096, status: int = 401) -> str:
    """Printable ASCII of at most ``longest`` characters: a shared secret or a bearer token as a header says it."""
    if value is None or value == "":
        raise FieldError(name, "", status)
    if not (isinstance(value, str) and len(value) <= longest and _PRINTABLE.fullmatch(value)):
        raise FieldError(name, f"printable ASCII of at most {longest} characters", status)
    return value


def same(given: str, expected: str) -> bool:
    """Whether two secrets (or signatures) are equal, in constant time; compared as bytes, so no text raises."""
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8", "surrogatepass"))
