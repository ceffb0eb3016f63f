"""What serve answers a request it does not take, in one JSON shape: a body over its route's limit (API Gateway's
10 MiB on the webhook's routes; the playground's own on its routes, whose page posts a message's files base64 in
one request), a method no route has, a request line the standard library refuses.

Was: a 10 MB PDF attached on the page was refused with "the body is over 10,485,760 bytes" (nothing about the
file), and PUT, DELETE, PATCH, HEAD answered Python's HTML 501 page. Real serve over HTTP, the playground on."""

from __future__ import annotations

import base64
import json
import socket
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from agent_runtime.playground import limits
from agent_runtime.service.serve import MAX_BODY_BYTES, LocalServer
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.playground_support import HELPER, act, page_token, playground

MB = 1024 * 1024


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LocalServer, str]]:
    with playground(tmp_path_factory.mktemp("requests"), {"helper": HELPER}) as server:
        yield server, page_token(server.url)


def _raw(server: LocalServer, head: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
    """A request as written, the writing side closed after ``body``; the status, headers and body answered."""
    with socket.create_connection(("127.0.0.1", int(server.url.rsplit(":", 1)[1])), timeout=20) as sock:
        sock.sendall(head.encode() + b"\r\n\r\n" + body)
        sock.shutdown(socket.SHUT_WR)
        answer = b""
        while chunk := sock.recv(1 << 16):
            answer += chunk
    if not answer.startswith(b"HTTP/"):  # refused before its version was read: answered as HTTP/0.9 (no head)
        return 0, {}, answer
    top, _, payload = answer.partition(b"\r\n\r\n")
    status, *lines = top.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status.split()[1]), headers, payload


def _pdf(size: int) -> str:
    return base64.b64encode(b"%PDF-1.7\n" + b"\0" * (size - 9)).decode()


def test_a_10_mb_pdf_attached_on_the_page_is_taken_and_queued(served: tuple[LocalServer, str]) -> None:
    server, token = served
    said = act(server.url, "message", {"channel": "C0HELP", "text": "@agent read the spec",
                                       "files": [{"name": "spec.pdf", "data": _pdf(10 * MB)}]}, token)  # fmt: skip
    assert said["sent"]["answer"] == {"status": "queued", "workflow": "helper"}
    assert server.playground is not None
    [message] = [m for m in server.playground.workspace.thread("C0HELP", said["ts"]) if m["ts"] == said["ts"]]
    assert [(f["name"], f["size"]) for f in message["files"]] == [("spec.pdf", 10 * MB)]


def test_files_over_the_playgrounds_limit_are_refused_by_name_and_limit(served: tuple[LocalServer, str]) -> None:
    server, token = served
    files = [{"name": "spec.pdf", "data": _pdf(30 * MB)}, {"name": "scan.pdf", "data": _pdf(20 * MB + MB // 2)}]
    with pytest.raises(urllib.error.HTTPError) as refused:
        act(server.url, "message", {"channel": "C0HELP", "text": "@agent read these", "files": files}, token)
    said = json.loads(refused.value.read())["error"]
    assert refused.value.code == 400
    assert "spec.pdf (30 MB)" in said and "scan.pdf (20.5 MB)" in said and "50.5 MB together" in said
    assert "up to 50 MB of files in a message" in said


def test_a_body_over_its_routes_limit_is_refused_in_json_saying_the_limit(served: tuple[LocalServer, str]) -> None:
    """Over the playground's limit on its route (the files named in words: the body was not read); over API
    Gateway's on the webhook's, where the playground's larger limit does not reach."""
    server, _ = served
    host = server.url.removeprefix("http://")
    page = f"POST /play/ui/message HTTP/1.1\r\nHost: {host}\r\nContent-Length: {limits.MAX_BODY + 1}"
    status, headers, body = _raw(server, page)
    assert status == 413 and headers["content-type"] == "application/json"
    assert "up to 50 MB of files in a message" in json.loads(body)["error"]
    for size in (MAX_BODY_BYTES + 1, limits.MAX_BODY):
        hook = f"POST /slack/events HTTP/1.1\r\nHost: {host}\r\nContent-Length: {size}"
        status, headers, body = _raw(server, hook)
        assert status == 413 and "API Gateway" in json.loads(body)["error"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    method=st.sampled_from(["PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "GET", "POST", "TRACE"]),
    path=st.sampled_from(["/slack/events", "/slack/interactivity", "/jira/webhook", "/hooks/helper", "/runs/x",
                          "/nowhere", "/", "/play/ui/state", "/play/slack/api/auth.test", "/play/nowhere"]),
)  # fmt: skip
def test_every_method_on_every_route_is_answered_in_json_never_an_html_page(
    served: tuple[LocalServer, str], method: str, path: str
) -> None:
    """Whatever the method and the route: never a 501, never HTML but the page itself; a refusal is JSON with its
    ``error``, a 405 with its Allow; a HEAD's answer has no body."""
    server, _ = served
    host = server.url.removeprefix("http://")
    status, headers, body = _raw(server, f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0")
    assert status != 501
    if status == 405:
        assert headers.get("allow")
    if method == "HEAD":
        assert body == b""
    elif status >= 400:
        assert headers["content-type"].startswith("application/json"), (method, path, status, body[:80])
        assert isinstance(json.loads(body)["error"], str)


@pytest.mark.parametrize(
    "head",
    ["GET / HTTP/9.9\r\nHost: x", "GET /" + "x" * 70_000 + " HTTP/1.1", "GET / HTTP/1.1\r\nX-Long: " + "y" * 70_000,
     "GET / HTTP/1.1" + "".join(f"\r\nX-{n}: 1" for n in range(120)), "FROB / HTTP/1.1\r\nHost: x"],
)  # fmt: skip
def test_what_the_standard_library_refuses_is_said_in_json(served: tuple[LocalServer, str], head: str) -> None:
    """A request line or headers it cannot read, a method no route has: JSON, as every refusal of serve's."""
    server, _ = served
    status, headers, body = _raw(server, head)
    assert status == 0 or (status >= 400 and headers["content-type"] == "application/json")
    assert json.loads(body)["error"]


def _files_refused(sizes: list[int], monkeypatch: pytest.MonkeyPatch) -> tuple[str | None, list[tuple[str, Any]]]:
    monkeypatch.setattr(limits, "MAX_FILES", 1000)  # the rule, on small files
    files = [(f"f{n}.pdf", b"x" * size) for n, size in enumerate(sizes)]
    return limits.files(files), files


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sizes=st.lists(st.integers(0, 1500), max_size=4))
def test_files_are_refused_exactly_over_the_limit_each_named(sizes: list[int], monkeypatch: pytest.MonkeyPatch) -> None:
    refused, files = _files_refused(sizes, monkeypatch)
    assert (refused is not None) is (sum(sizes) > 1000)
    if refused is not None:
        assert all(name in refused for name, _ in files) and "of files in a message" in refused


def test_the_playground_route_limit_holds_its_files_in_base64() -> None:
    assert len(base64.b64encode(b"\0" * limits.MAX_FILES)) + 240_000 <= limits.MAX_BODY  # and 40,000 characters
    assert limits.MAX_FILES >= 10 * 1000 * 1000  # the README's 10 MB PDF
