"""Bounded responses: a declared source never reads more than ``MAX_RESULT_BYTES`` of one answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2

MAX_RESULT_BYTES = 16 * 1024 * 1024  # one response; larger ones are refused (the model is told to ask for less)


def capped_transport(limit: int = MAX_RESULT_BYTES) -> httpx2.AsyncHTTPTransport:
    """An httpx2 transport that refuses JSON bodies over ``limit`` bytes (event streams are capped per event)."""
    return _CappedTransport(limit)


class _CappedTransport(httpx2.AsyncHTTPTransport):
    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await super().handle_async_request(request)
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return response
        declared = response.headers.get("content-length")
        if declared and declared.isdigit() and int(declared) > self.limit:
            await response.aclose()
            raise httpx2.ReadError(f"the response is {int(declared):,} bytes, over the {self.limit:,}-byte limit")
        response.stream = _CappedStream(response.stream, self.limit)
        return response


class _CappedStream(httpx2.AsyncByteStream):
    def __init__(self, inner: Any, limit: int) -> None:
        self.inner, self.limit = inner, limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += len(chunk)
            if seen > self.limit:
                raise httpx2.ReadError(f"the response is over the {self.limit:,}-byte limit: ask for less")
            yield chunk

    async def aclose(self) -> None:
        await self.inner.aclose()
