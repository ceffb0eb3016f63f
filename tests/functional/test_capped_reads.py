"""Capped HTTP reads (``capped.read_capped``) on a real server on 127.0.0.1, through both clients the runtime reads
answers with (httpx2 streamed, urllib). For any body and any Content-Length — honest, lying low, lying high,
absent — the read returns the body as HTTP frames it when that is within the cap, or raises the caller's error
naming what was too big (a declared length over the cap refused before a byte is read); and it never takes more
than limit + 1 bytes from the client. Then each of the three callers raises its own error through it."""

from __future__ import annotations

import contextlib
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

import httpx2
import pytest
from agent_runtime import ToolError
from agent_runtime.capped import read_capped, size
from agent_runtime.chat.exceptions import ReplyError
from agent_runtime.chat.replies import request
from agent_runtime.identity.provider import ProviderClient, ProviderError
from agent_runtime.toolsets import openapi
from agent_runtime.toolsets.secrets import Redactor
from agent_runtime.workflows.oauth import OAuthProvider
from agent_runtime.workflows.tools import OpenApiSettings
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.http_support import loopback

BODY = bytes(n % 251 for n in range(80_000))


class Served(BaseHTTPRequestHandler):
    """``/<size>/<declared>``: the first ``size`` bytes of BODY, under that Content-Length (``-``: none), then
    the connection closed (HTTP/1.0)."""

    def do_GET(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))  # a POST's form
        _, count, declared = self.path.split("?")[0].split("/")[:3]
        self.send_response(200)
        if declared != "-":
            self.send_header("Content-Length", urllib.parse.unquote(declared))  # '²' is sent as its byte
        self.end_headers()
        with contextlib.suppress(OSError):  # the client refused the rest
            self.wfile.write(BODY[: int(count)])

    do_POST = do_GET

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def root() -> Iterator[str]:
    with loopback(Served) as url:
        yield url


class TooBig(Exception):
    pass


class Taken:
    """What the read took from the client's response: its read() or iter_bytes(), counted."""

    def __init__(self) -> None:
        self.bytes = 0

    def counted(self, read: Callable[..., bytes]) -> Callable[..., bytes]:
        def counting(*args: Any) -> bytes:
            data = read(*args)
            self.bytes += len(data)
            return data

        return counting

    def chunks(self, chunks: Callable[..., Iterator[bytes]]) -> Callable[..., Iterator[bytes]]:
        def counting(*args: Any) -> Iterator[bytes]:
            for chunk in chunks(*args):
                self.bytes += len(chunk)
                yield chunk

        return counting


@contextmanager
def by_urllib(url: str, taken: Taken) -> Iterator[Any]:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with opener.open(url, timeout=10) as response:
        response.read = taken.counted(response.read)
        yield response


@contextmanager
def by_httpx(url: str, taken: Taken) -> Iterator[Any]:
    with httpx2.Client(timeout=10, trust_env=False) as client, client.stream("GET", url) as response:
        response.iter_bytes = taken.chunks(response.iter_bytes)  # type: ignore[method-assign]
        yield response


CLIENTS: dict[str, Callable[[str, Taken], AbstractContextManager[Any]]] = {"urllib": by_urllib, "httpx2": by_httpx}


@st.composite
def answers(draw: st.DrawFn) -> tuple[int, int | None, int]:
    """A body's size, its declared length (honest, lying low, lying high, absent) and the cap."""
    count, limit = draw(st.integers(0, 400)), draw(st.integers(0, 300))
    kind = draw(st.sampled_from(["honest", "low", "high", "absent"]))
    declared = {
        "honest": count,
        "low": draw(st.integers(0, max(count - 1, 0))),
        "high": count + draw(st.integers(1, 100_000)),
        "absent": None,
    }[kind]
    return count, declared, limit


@pytest.mark.parametrize("client", CLIENTS)
@settings(max_examples=60, deadline=None)
@given(answer=answers())
def test_a_capped_read_is_the_whole_body_or_the_error_and_never_more(
    client: str, answer: tuple[int, int | None, int], root: str
) -> None:
    count, declared, limit = answer
    framed = BODY[: count if declared is None else min(count, declared)]  # a low length ends the body there
    taken, refused, incomplete, data = Taken(), "", False, b""
    with CLIENTS[client](f"{root}/{count}/{'-' if declared is None else declared}", taken) as response:
        try:
            data = read_capped(response, limit, TooBig, "the thing")
        except TooBig as error:
            refused = str(error)
        except httpx2.RemoteProtocolError:  # httpx2's: the body ended before its declared length
            incomplete = True
    assert taken.bytes <= limit + 1
    if declared is not None and declared > limit:
        assert refused == f"the thing is {declared:,} bytes, over the limit of {size(limit)}" and taken.bytes == 0
    elif len(framed) > limit:
        assert refused == f"the thing is over the limit of {size(limit)}"
    elif incomplete:
        assert client == "httpx2" and declared is not None and declared > count
    else:
        assert (refused, data) == ("", framed)


def test_a_length_that_is_no_number_is_no_length(root: str) -> None:
    """'²' is a digit to str.isdigit() and no number to int(): urllib passes it on, and the body is what counts."""
    for declared, limit in (("%C2%B2", 100), ("%C2%B2", 10), ("-5", 100), ("0x10", 100)):
        with by_urllib(f"{root}/50/{declared}", Taken()) as response:
            if limit < 50:
                with pytest.raises(TooBig, match="over the limit of 10 bytes"):
                    read_capped(response, limit, TooBig, "the thing")
            else:
                assert read_capped(response, limit, TooBig, "the thing") == BODY[:50]


def test_each_caller_raises_its_own_error_naming_what_was_too_big(root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ReplyError, match=r"^the answer is over the limit of 1,000 bytes$"):
        request("GET", f"{root}/5000/-", {}, None, limit=1000)
    with pytest.raises(ReplyError, match=r"^the file is 5,000 bytes, over the limit of 1,000 bytes$"):
        request("GET", f"{root}/5000/5000", {}, None, limit=1000, what="the file")

    provider = OAuthProvider("acme", f"{root}/authorize", f"{root}/70000/-", "client-1")
    with pytest.raises(ProviderError, match=r"^the answer of acme's /70000/- is over the limit of 64 KB$"):
        ProviderClient(provider, None).refresh("refresh-token")

    monkeypatch.setattr(openapi, "MAX_RESULT_BYTES", 1000)
    spec = {
        "openapi": "3.0.3",
        "info": {"title": "x", "version": "1"},
        "paths": {
            f"/{path}": {"get": {"operationId": name}} for name, path in (("open", "5000/-"), ("told", "5000/5000"))
        },
    }
    tools = openapi.openapi_tools(OpenApiSettings(name="api", spec="-", base_url=root), spec, {}, Redactor())
    said = {}
    for tool in tools:
        with pytest.raises(ToolError) as raised:
            tool.invoke({})
        said[tool.name] = str(raised.value)
    assert set(said.values()) == {
        "the response is over the limit of 1,000 bytes: ask for less (filter, page)",
        "the response is 5,000 bytes, over the limit of 1,000 bytes: ask for less (filter, page)",
    }
