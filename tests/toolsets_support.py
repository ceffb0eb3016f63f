"""Real servers for the workflow-tools tests: the `mcp` package's own MCPServer over streamable HTTP (uvicorn on
127.0.0.1), and an HTTP server with an OpenAPI document and its operations."""

from __future__ import annotations

import base64
import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, quote, urlparse

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError as McpToolError
from mcp_types import ImageContent, TextContent, ToolAnnotations

from tests.http_support import loopback

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
)


def notes_server(*, pages: dict[str, str] | None = None, created: list[str] | None = None) -> MCPServer:
    """A small notes service: search (read-only), create_page (mutating), and tools that misbehave."""
    server = MCPServer("notes")
    store = dict(pages or {"p1": "Webhook retries: back off exponentially, cap at 5 attempts (REQ-7)."})
    made = created if created is not None else []

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def search(query: str, limit: int = 5) -> str:
        """Search the notes by words."""
        hits = [f"{pid}: {text}" for pid, text in store.items() if query.lower() in text.lower()]
        return "\n".join(hits[:limit]) or "no match"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def fetch(id: str) -> str:
        """One page by id."""
        return store.get(id, f"no page {id}")

    @server.tool()
    def create_page(title: str, body: str) -> str:
        """Create a page."""
        made.append(title)
        store[f"p{len(store) + 1}"] = body
        return f"created page {title!r}"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def whoami(fail: bool = False) -> str:
        """Who the caller is: quotes its token, as a careless server does (in an error too)."""
        if fail:
            raise McpToolError("rejected Authorization: Bearer notes-secret-456 (expired)")
        return "caller: Bearer notes-secret-456"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def hang(seconds: float = 30.0) -> str:
        """Takes its time."""
        time.sleep(seconds)
        return "finally"

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def dump(megabytes: int = 50) -> str:
        """Returns a huge text."""
        return "x" * (megabytes * 1024 * 1024)

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def chart() -> list[TextContent | ImageContent]:
        """A chart as an image."""
        return [
            TextContent(type="text", text="the chart:"),
            ImageContent(type="image", data=base64.b64encode(PNG).decode(), mime_type="image/png"),
        ]

    @server.tool(annotations=ToolAnnotations(read_only_hint=True))
    def broken(reason: str = "the index is rebuilding") -> str:
        """Always fails (a failure the server anticipated: its message reaches the client)."""
        raise McpToolError(reason)

    return server


def crowded_server(
    count: int = 500, server: MCPServer | None = None, *, name: str = "op", doc: str = "Operation {n}."
) -> MCPServer:
    """``count`` read-only tools ``<name>_<n>`` (on ``server``, or a new one): noise to be filtered or searched."""
    server = server or MCPServer("crowded")
    for number in range(count):

        def make(n: int) -> Callable[[], str]:
            def op() -> str:
                return f"{name} {n}"

            op.__name__ = f"{name}_{n}"
            op.__doc__ = doc.format(n=n)
            return op

        server.tool(annotations=ToolAnnotations(read_only_hint=True))(make(number))
    return server


def _free_socket(port: int = 0) -> socket.socket:
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


@contextmanager
def serve_mcp(server: MCPServer, port: int = 0) -> Iterator[str]:
    """The server's streamable HTTP app on 127.0.0.1 (on ``port``: a restart at the same address); yields its
    /mcp URL."""
    sock = _free_socket(port)
    app = uvicorn.Server(uvicorn.Config(server.streamable_http_app(), log_level="error", lifespan="on"))
    thread = threading.Thread(target=app.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not app.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    finally:
        app.should_exit = True
        thread.join(5)
        sock.close()


BILLING_SPEC = {
    "openapi": "3.0.3",
    "info": {"title": "Billing", "version": "1"},
    "servers": [{"url": "http://placeholder.invalid/api"}],
    "paths": {
        "/invoices/{id}": {
            "get": {
                "operationId": "getInvoice",
                "summary": "One invoice by id.",
                "parameters": [{"$ref": "#/components/parameters/InvoiceId"}],
            }
        },
        "/invoices": {
            "get": {
                "operationId": "listInvoices",
                "summary": "Invoices, filtered by status.",
                "parameters": [
                    {"name": "status", "in": "query", "schema": {"type": "string", "enum": ["open", "paid"]}},
                    {"name": "X-Tenant", "in": "header", "required": True, "schema": {"type": "string"}},
                ],
            },
            "post": {
                "operationId": "createInvoice",
                "summary": "Create an invoice.",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/NewInvoice"}}},
                },
            },
        },
        "/export": {"get": {"operationId": "exportAll", "summary": "Every invoice, as one huge JSON."}},
        "/whoami": {"get": {"operationId": "whoAmI", "summary": "Who the caller is (echoes its credentials)."}},
        "/slow": {"get": {"operationId": "slowReport", "summary": "A report that takes long."}},
        "/statement.pdf": {"get": {"operationId": "statement", "summary": "The statement as a PDF."}},
        "/echo": {"get": {"operationId": "echoEncoded", "summary": "Echoes the credentials, encoded."}},
        "/receipt.pdf": {"get": {"operationId": "receipt", "summary": "A receipt that quotes the credentials."}},
    },
    "components": {
        "parameters": {
            "InvoiceId": {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}},
        },
        "schemas": {
            "NewInvoice": {
                "type": "object",
                "required": ["customer", "amount"],
                "properties": {"customer": {"type": "string"}, "amount": {"type": "number"}},
            }
        },
    },
}


class BillingApi:
    """The operations of BILLING_SPEC; records what it was sent."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.invoices = {"INV-1": {"id": "INV-1", "customer": "ACME", "amount": 120.0, "status": "open"}}

    def handle(
        self, method: str, path: str, query: dict[str, list[str]], headers: Any, body: bytes
    ) -> tuple[int, str, bytes]:
        self.requests.append({"method": method, "path": path, "query": query, "headers": dict(headers), "body": body})
        if path == "/openapi.json":
            return 200, "application/json", json.dumps(BILLING_SPEC).encode()
        sent = str(headers.get("Authorization") or "")
        token = sent.removeprefix("Bearer ")
        if path == "/api/echo":  # the credentials as APIs echo them: JSON with \/, percent-encoded, base64
            echoed = {"json": json.dumps(token).replace("/", "\\/"), "url": quote(token, safe=""),
                      "basic": base64.b64encode(f"svc:{token}".encode()).decode(),
                      "b64": base64.b64encode(token.encode()).decode()}  # fmt: skip
            return 200, "application/json", json.dumps(echoed).encode()
        if path == "/api/receipt.pdf":  # a binary answer the tool saves as a file
            return 200, "application/pdf", b"%PDF-1.4 receipt issued to " + sent.encode() + b" " + token.encode()
        if headers.get("Authorization") != "Bearer billing-secret-123":  # echoes what it got, as some APIs do
            return (
                401,
                "application/json",
                json.dumps({"error": "unauthorized", "got": headers.get("Authorization")}).encode(),
            )
        if method == "GET" and path.startswith("/api/invoices/"):
            invoice = self.invoices.get(path.rsplit("/", 1)[1])
            return (
                (200, "application/json", json.dumps(invoice).encode())
                if invoice
                else (404, "text/plain", b"no such invoice")
            )
        if method == "GET" and path == "/api/invoices":
            status = query.get("status", [None])[0]
            rows = [i for i in self.invoices.values() if status in (None, i["status"])]
            return 200, "application/json", json.dumps(rows).encode()
        if method == "POST" and path == "/api/invoices":
            data = json.loads(body)
            number = f"INV-{len(self.invoices) + 1}"
            self.invoices[number] = {"id": number, **data, "status": "open"}
            return 201, "application/json", json.dumps(self.invoices[number]).encode()
        if path == "/api/whoami":  # a 200 that quotes the credentials it was sent
            return 200, "application/json", json.dumps({"caller": headers.get("Authorization")}).encode()
        if path == "/api/export":
            return 200, "application/json", b"[" + b'{"id": "INV-0", "pad": "' + b"x" * (50 << 20) + b'"}]'
        if path == "/api/slow":
            time.sleep(5)
            return 200, "text/plain", b"late"
        if path == "/api/statement.pdf":
            return 200, "application/pdf", b"%PDF-1.4 fake statement"
        return 404, "text/plain", b"not found"


@contextmanager
def serve_billing(api: BillingApi | None = None) -> Iterator[tuple[str, BillingApi]]:
    """Yields the server's root URL (the document is at /openapi.json, the operations under /api)."""
    api = api or BillingApi()

    class Handler(BaseHTTPRequestHandler):
        def _any(self) -> None:
            url = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            status, kind, data = api.handle(
                self.command, url.path, parse_qs(url.query), self.headers, self.rfile.read(length)
            )
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            with suppress(BrokenPipeError, ConnectionResetError):
                self.wfile.write(data)

        do_GET = do_POST = do_PUT = do_DELETE = _any

        def log_message(self, *args: Any) -> None:
            pass

    with loopback(Handler) as root:
        yield root, api


STDIO_SERVER = """
from tests.toolsets_support import notes_server
notes_server().run("stdio")
"""


@contextmanager
def serve_raw_mcp(listing: Callable[[str | None], dict[str, Any]]) -> Iterator[str]:
    """A hand-written MCP server over streamable HTTP (JSON answers, no session id): it says whatever
    ``listing(cursor)`` returns to tools/list (a result, or {"error": ...}), as a hostile or broken server
    would; yields its /mcp URL."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            message = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
            if "id" not in message:  # a notification
                self.send_response(202)
                self.end_headers()
                return
            if message["method"] == "initialize":
                version = message["params"]["protocolVersion"]
                answer: dict[str, Any] = {"result": {"protocolVersion": version, "capabilities": {"tools": {}},
                                                     "serverInfo": {"name": "raw", "version": "1"}}}  # fmt: skip
            elif message["method"] == "tools/list":
                answer = listing((message.get("params") or {}).get("cursor"))
            else:
                answer = {"error": {"code": -32601, "message": "method not found"}}
            data = json.dumps({"jsonrpc": "2.0", "id": message["id"], **answer}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # no server-initiated stream
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def do_DELETE(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    with loopback(Handler) as root:
        yield f"{root}/mcp"
