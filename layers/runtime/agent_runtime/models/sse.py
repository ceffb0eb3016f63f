"""A streamed reply read with every cost bounded: bytes, one line, and silence.

The ``openai`` client's own SSE decoder keeps whatever the server sends: an endpoint that streams without end
fills memory (2 GiB in seconds), one line that never ends is buffered whole, and the socket's read timeout is
reset by any byte — so a proxy's ``: keep-alive`` comments, sent while the upstream is stuck, keep a call alive
for ever. Here the attempt reads the response's bytes itself: past ``max_bytes`` or a line of ``max_line`` bytes
it is a model error (recorded, not retried: the endpoint would do it again); silence is time without a data event
(comments do not count), checked as bytes arrive, while the socket's own timeout covers no bytes at all.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from .stream import MalformedReplyError

MAX_REPLY_BYTES = 16 << 20  # a streamed reply at most (4,096 tokens stream in about 1-2 MB of chunks)
MIN_REPLY_BYTES = 4 << 20  # room for servers that send more per token (or ignore the cap a little)
BYTES_PER_TOKEN = 1024  # a chunk per token, each a JSON object of a few hundred bytes: 3-4x that
MAX_LINE_BYTES = 1 << 20  # one SSE line (one chunk's JSON)


class OversizedReplyError(MalformedReplyError):
    """The reply passed its size bound: a hostile or broken endpoint. Not retried."""


class SilentStreamError(Exception):
    """No data event for the idle timeout (keep-alive comments do not count)."""


@dataclass(frozen=True, slots=True)
class Bounds:
    max_bytes: int
    idle: float  # seconds without a data event
    max_line: int = MAX_LINE_BYTES

    @classmethod
    def for_reply(cls, reply_cap: int | None, idle: float) -> Bounds:
        """Bytes from the reply's cap: 4 to 16 MB."""
        wanted = (reply_cap or 8192) * BYTES_PER_TOKEN
        return cls(max(MIN_REPLY_BYTES, min(MAX_REPLY_BYTES, wanted)), idle)


def events(chunks: Iterator[bytes], bounds: Bounds, clock: Callable[[], float] = time.monotonic) -> Iterator[Any]:
    """The JSON of each ``data:`` event until ``[DONE]`` or the end, within ``bounds``."""
    buffer, data, total, heard = bytearray(), list[bytes](), 0, clock()
    for piece in chunks:
        total += len(piece)
        if total > bounds.max_bytes:
            raise OversizedReplyError(f"the streamed reply passed {bounds.max_bytes:,} bytes")
        buffer += piece
        start = 0
        while (end := buffer.find(b"\n", start)) >= 0:
            line = bytes(buffer[start:end]).rstrip(b"\r")
            start = end + 1
            if line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
            elif not line and data:  # an event ends: one chunk
                joined, data = b"\n".join(data), []
                heard = clock()
                if joined.strip() == b"[DONE]":
                    return
                yield _json(joined)
        del buffer[:start]
        if len(buffer) > bounds.max_line or sum(map(len, data)) > bounds.max_line:
            raise OversizedReplyError(f"a line of the streamed reply passed {bounds.max_line:,} bytes")
        if clock() - heard > bounds.idle:
            raise SilentStreamError(f"no data for {bounds.idle:.0f}s (only keep-alive comments)")
    if data:
        yield _json(b"\n".join(data))


def read_body(chunks: Iterator[bytes], max_bytes: int) -> bytes:
    """A whole (not streamed) body, refused past ``max_bytes`` (a proxy's 900 MB HTML page is not read)."""
    body, total = bytearray(), 0
    for piece in chunks:
        total += len(piece)
        if total > max_bytes:
            raise OversizedReplyError(f"the reply body passed {max_bytes:,} bytes")
        body += piece
    return bytes(body)


def _json(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except ValueError as error:
        raise MalformedReplyError(f"a streamed chunk is not JSON ({error})") from None
