"""An HTTP answer's body read under a byte cap, for httpx2's streamed responses and urllib's alike: refused on its
declared length alone when that is over the cap, and otherwise taken from the client at most one byte past the
cap, so a server that sends more than it may (or says less than it sends) costs no more than the cap. A length
that is not a number is no length (the body, read, is what counts); one that says more than is sent ends the read
short (urllib: the bytes that came; httpx2: its error of an incomplete body, which its callers handle)."""

from __future__ import annotations

import http.client
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import httpx2

DIGITS = re.compile(r"[0-9]+")  # ASCII only: str.isdigit() takes '²', which int() refuses


def read_capped(
    response: httpx2.Response | http.client.HTTPResponse, limit: int, error: Callable[[str], Exception], what: str
) -> bytes:
    """The body of ``response`` when it is at most ``limit`` bytes; else ``error(said)`` is raised, ``said``
    naming ``what`` was too big (``the file``), its declared size when it had one, and the limit."""
    declared = (response.headers.get("content-length") or "").strip()
    if DIGITS.fullmatch(declared) and int(declared) > limit:
        raise error(f"{what} is {int(declared):,} bytes, over the limit of {size(limit)}")
    if isinstance(response, http.client.HTTPResponse):  # urllib's: read() returns short only at the body's end
        data = response.read(limit + 1)
    else:  # httpx2's, in chunks of limit + 1 bytes: the first is the whole body within the cap, or over it
        data = next(response.iter_bytes(limit + 1), b"")
    if len(data) > limit:
        raise error(f"{what} is over the limit of {size(limit)}")
    return data


def size(count: int) -> str:
    """A number of bytes as people read a limit: ``16 MB``, ``64 KB`` when whole, else ``1,000 bytes``."""
    for unit, shift in (("MB", 20), ("KB", 10)):
        if count >= 1 << shift and count % (1 << shift) == 0:
            return f"{count >> shift:,} {unit}"
    return f"{count:,} bytes"
