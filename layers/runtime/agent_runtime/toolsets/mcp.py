"""MCP servers as tools, through the official ``mcp`` package's client (streamable HTTP; stdio for local runs).

The loop is synchronous and the ``mcp`` client is async, so each server gets one long-lived session owned by a
task on a shared background event loop: the session is opened once per process (a warm Lambda keeps it) and
every call is a request on it, not a new handshake. Tools are listed once per cold start and cached.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import re
import tempfile
import threading
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import ConfigError, ToolError
from ..run_context import RunContext
from ..tools.decorator import Tool, external_tool
from ..workflows.tools import McpServerSettings
from ..workflows.toolsearch import MAX_TOOLS_WITHOUT_ALLOW
from .exceptions import ToolSourceError
from .results import MAX_RESULT_BYTES, capped_transport
from .secrets import Redactor

if TYPE_CHECKING:
    import mcp_types

T = TypeVar("T")
CONNECT_TIMEOUT = 15.0
CLOSE_SECONDS = 4.0  # a transport's close at most (the mcp client gives a stdio server 2 s, then terminates it)
MAX_PAGES = 100  # of a tool listing
MAX_LISTED = 10_000  # tools, in all pages
MAX_SCHEMA_DEPTH = 32  # a tool whose input schema nests deeper is left out
MAX_SCHEMA_CHARS = 100_000
MAX_DESCRIPTION_CHARS = 4_000


class _Loop:
    """One event loop on a daemon thread, shared by every MCP session of the process."""

    _lock = threading.Lock()
    _instance: _Loop | None = None

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        threading.Thread(target=self.loop.run_forever, name="mcp-sessions", daemon=True).start()

    @classmethod
    def get(cls) -> _Loop:
        with cls._lock:
            if cls._instance is None:
                cls._instance = _Loop()
            return cls._instance

    def run(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise TimeoutError from None


class McpSession:
    """One server: a session opened on first use and reopened after it breaks."""

    def __init__(self, settings: McpServerSettings, headers: dict[str, str], redact: Redactor) -> None:
        self.settings, self.headers, self.redact = settings, headers, redact
        self._session: Any = None
        self._closing: asyncio.Event | None = None
        self._lock = threading.Lock()
        self._tools: list[mcp_types.Tool] | None = None
        self._stderr: Any = None  # a stdio server's stderr: what it said when it could not start
        self._owner: asyncio.Task[None] | None = None  # the task that holds the transport (a stdio server's process)

    # Lifecycle
    def _open(self) -> Any:
        with self._lock:
            if self._session is None:
                loop = _Loop.get()
                self._session = loop.run(self._start(), CONNECT_TIMEOUT + 5)
            return self._session

    async def _start(self) -> Any:
        ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._closing = asyncio.Event()
        owner = self._owner = asyncio.get_running_loop().create_task(self._own(ready, self._closing))
        try:
            return await asyncio.wait_for(ready, CONNECT_TIMEOUT)
        except BaseException:  # no handshake in time: unwind the transport and wait for it, bounded (a stdio
            owner.cancel()  # server's process ends with it, not after the CLI has exited)
            await asyncio.wait({owner}, timeout=CLOSE_SECONDS)
            raise

    async def _own(self, ready: asyncio.Future[Any], closing: asyncio.Event) -> None:
        """Enter and exit the transport and the session in one task (anyio's cancel scopes require it)."""
        from mcp import ClientSession

        try:
            async with AsyncExitStack() as stack:
                read, write = await self._transport(stack)
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                ready.set_result(session)
                await closing.wait()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
        finally:
            if self._closing is closing:
                self._session = None

    async def _transport(self, stack: AsyncExitStack) -> tuple[Any, Any]:
        if self.settings.command:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            program, *args = self.settings.command
            if self._stderr is not None:
                self._stderr.close()
            # Kept open past the transport: read when the server fails to start (closed with the next one).
            self._stderr = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")  # noqa: SIM115
            params = StdioServerParameters(command=program, args=args)
            streams = await stack.enter_async_context(stdio_client(params, errlog=self._stderr))
            return streams[0], streams[1]
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        timeout = httpx2.Timeout(CONNECT_TIMEOUT, read=float(self.settings.timeout_seconds) + 5)
        client = httpx2.AsyncClient(headers=self.headers, timeout=timeout, transport=capped_transport())
        await stack.enter_async_context(client)
        url = str(self.settings.url)
        streams = await stack.enter_async_context(
            streamable_http_client(url, http_client=client, max_sse_event_size=MAX_RESULT_BYTES)
        )
        return streams[0], streams[1]

    def _said(self) -> str:
        """The end of a stdio server's stderr, when it wrote any: why it did not start, in its own words."""
        tail = _tail(self._stderr, self.redact) if self._stderr is not None else ""
        return f"; it said: {tail}" if tail else ""

    def close(self, *, wait: float = 0.0) -> None:
        """Ends the session; with ``wait``, waits that long at most for its transport to close (a stdio server's
        process to end: at exit, so none outlives the process that started it)."""
        closing, self._closing = self._closing, None
        owner, self._owner = self._owner, None
        if closing is not None:
            _Loop.get().loop.call_soon_threadsafe(closing.set)
        self._session = None
        if wait and owner is not None and not owner.done():
            with contextlib.suppress(Exception):
                _Loop.get().run(asyncio.wait({owner}, timeout=wait), wait + 1)

    # Requests
    def tools(self) -> list[mcp_types.Tool]:
        """Every tool the server lists (all pages), once per process."""
        if self._tools is None:
            self._tools = self._request(self._list, CONNECT_TIMEOUT * 2)
        return self._tools

    async def _list(self, session: Any) -> list[mcp_types.Tool]:
        import mcp_types

        found: list[mcp_types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_PAGES):  # an endless listing (a cursor that never ends) stops here
            params: Any = mcp_types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            found += page.tools
            cursor = page.next_cursor
            if not cursor or len(found) > MAX_LISTED:
                break
        return found

    def call(self, name: str, arguments: dict[str, Any], *, retry: bool) -> mcp_types.CallToolResult:
        timeout = float(self.settings.timeout_seconds)

        async def request(session: Any) -> mcp_types.CallToolResult:
            result: mcp_types.CallToolResult = await session.call_tool(name, arguments, read_timeout_seconds=timeout)
            return result

        try:
            return self._request(request, timeout + 5)
        except SessionLostError as error:
            if not (retry or error.unsent):  # the call may have run: say so; the next call opens a new session
                lost = f"{error} (the connection was lost during the call: its effect is unknown)"
                raise ToolSourceError(lost) from None
            return self._request(request, timeout + 5)  # a new session: the server restarted, or was killed
        except ToolSourceError:
            if not retry:
                raise
            self.close()  # a broken session (a frozen Lambda's dead socket): reopen once for a read-only call
            return self._request(request, timeout + 5)

    def _request(self, request: Callable[[Any], Coroutine[Any, Any, T]], timeout: float) -> T:
        from mcp.shared.exceptions import MCPError

        where = f"MCP server {self.settings.name!r}"
        try:
            session = self._open()
            return _Loop.get().run(request(session), timeout)
        except TimeoutError:
            self.close()
            raise ToolError(f"{where} did not answer within {timeout:.0f} s") from None
        except MCPError as error:
            message = error.error.message
            if "timed out" in message:  # the client's own read timeout: the session stays usable
                raise ToolError(f"{where} did not answer within {self.settings.timeout_seconds} s") from None
            if _SESSION_LOST.search(message):  # a restarted server (404 on its session), a killed process
                self.close()
                unsent = _UNSENT.search(message) is not None
                raise SessionLostError(f"{where}: {self.redact(message)}", unsent=unsent) from None
            raise ToolError(f"{where}: {self.redact(message)}") from None
        except Exception as error:  # transport failures arrive wrapped in exception groups
            said = self._said()
            self.close()
            raise ToolSourceError(f"{where} is unreachable: {_reason(error, self.redact)}{said}") from None


class SessionLostError(ToolSourceError):
    """The session is gone: the server restarted (it answers 404 for the old session: the call never ran,
    ``unsent``) or its connection closed (a stdio server killed: the call may have run)."""

    def __init__(self, message: str, *, unsent: bool) -> None:
        super().__init__(message)
        self.unsent = unsent


# What the client says when the server no longer knows the session (the spec: start a new one on that 404) or the
# transport closed under it.
_SESSION_LOST = re.compile(
    r"session not found|session.{0,20}(terminated|expired|unknown)|connection closed|\b404\b", re.IGNORECASE
)
_UNSENT = re.compile(r"session not found|session.{0,20}(terminated|expired|unknown)|\b404\b", re.IGNORECASE)


def _tail(handle: Any, redact: Callable[[str], str], chars: int = 500) -> str:
    try:
        handle.flush()
        handle.seek(0)
        return redact(str(handle.read()))[-chars:].strip()  # redacted whole, then cut: no secret's end is left
    except (OSError, ValueError):  # closed already
        return ""


def _reason(error: BaseException, redact: Callable[[str], str]) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return redact(f"{type(error).__name__}: {error}")[:300]  # redacted whole, then cut: no secret's start is left


def mcp_tools(
    settings: McpServerSettings, session: McpSession, *, searchable: bool = False
) -> tuple[list[Tool], list[str]]:
    """The server's tools, filtered by allow/deny, named ``<server>_<tool>``; and what was left out, and why (a
    tool the workflow names that the server no longer lists, a name or a schema no model can take): each costs
    only itself. ``searchable``: its tools may be deferred (found by a search), so any number is taken."""
    listed = {tool.name: tool for tool in session.tools()}
    wanted, problems = _filter(settings, list(listed), searchable)
    tools: list[Tool] = []
    for name in wanted:
        try:
            made = _tool(settings, session, listed[name])
        except ConfigError as error:
            problems.append(str(error))
            continue
        if any(made.name == other.name for other in tools):
            problems.append(f"tool {name!r}: its name cleans to {made.name!r}, as another tool's does")
            continue
        tools.append(made)
    return tools, problems


def _filter(settings: McpServerSettings, names: Sequence[str], searchable: bool) -> tuple[list[str], list[str]]:
    named = [*(settings.allow or ()), *settings.deny, *settings.read_only, *settings.mutating]
    unknown = sorted(set(named) - set(names))
    problems = [f"the server lists no tool {', '.join(map(repr, unknown))}"] if unknown else []
    wanted = [n for n in names if n not in settings.deny and (settings.allow is None or n in settings.allow)]
    if settings.allow is None and len(wanted) > MAX_TOOLS_WITHOUT_ALLOW and not searchable:
        raise ConfigError(
            f"the server lists {len(wanted)} tools; name the ones this workflow uses with allow: [...], or let them be "
            f"found by a search (tools.search.defer: {settings.name} is never; at most {MAX_TOOLS_WITHOUT_ALLOW} are "
            "taken without a list when every schema is sent with every call)"
        )
    return wanted, problems


def _tool(settings: McpServerSettings, session: McpSession, listed: mcp_types.Tool) -> Tool:
    hints = listed.annotations
    mutating = not (hints is not None and hints.read_only_hint is True)
    if listed.name in settings.read_only:
        mutating = False
    if listed.name in settings.mutating:
        mutating = True
    name = tool_name(settings.name, listed.name)
    schema = dict(listed.input_schema)
    if _depth(schema) > MAX_SCHEMA_DEPTH or len(json.dumps(schema, default=str)) > MAX_SCHEMA_CHARS:
        raise ConfigError(f"tool {listed.name!r}: its input schema is nested too deep or too large for a model")
    description = listed.description or ""
    if len(description) > MAX_DESCRIPTION_CHARS:  # every description is in every request
        description = description[:MAX_DESCRIPTION_CHARS] + " …"

    def call(arguments: dict[str, Any], ctx: RunContext | None) -> str:
        result = session.call(listed.name, arguments, retry=not mutating)
        return render(result, ctx, name, session.redact.data)

    return external_tool(name, description, schema, call, mutating=mutating, redact=session.redact)


def _depth(value: Any, limit: int = MAX_SCHEMA_DEPTH + 1) -> int:
    """How deep a JSON value nests (walked with a stack, stopping past ``limit``: no recursion to exhaust)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        if deepest > limit:
            return deepest
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def tool_name(source: str, tool: str) -> str:
    """``<source>_<tool>`` in Chat Completions' alphabet, at most 64 characters."""
    cleaned = "".join(c if c.isascii() and (c.isalnum() or c in "_-") else "_" for c in tool)
    name = f"{source}_{cleaned}"
    if len(name) > 64:
        raise ConfigError(f"tool {tool!r} of {source!r}: {name!r} is over Chat Completions' 64 characters")
    return name


def render(
    result: mcp_types.CallToolResult, ctx: RunContext | None, name: str, scrub: Callable[[bytes], bytes] = bytes
) -> str:
    """Text parts as text; images, audio and binary resources saved as files the model can open by id, with the
    source's secrets taken out of their bytes (``scrub``) as they are out of its text."""
    import mcp_types

    parts: list[str] = []
    for number, block in enumerate(result.content, 1):
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ImageContent | mcp_types.AudioContent):
            parts.append(_saved(ctx, scrub(base64.b64decode(block.data)), f"{name}-{number}", block.mime_type))
        elif isinstance(block, mcp_types.EmbeddedResource):
            resource = block.resource
            if isinstance(resource, mcp_types.TextResourceContents):
                parts.append(resource.text)
            else:
                parts.append(_saved(ctx, scrub(base64.b64decode(resource.blob)), str(resource.uri), resource.mime_type))
        elif isinstance(block, mcp_types.ResourceLink):
            parts.append(f"[resource {block.uri}" + (f": {block.description}]" if block.description else "]"))
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    text = "\n".join(parts)
    if result.is_error:
        raise ToolError(text or "the tool reported an error without a message")
    return text or "done"


def _saved(ctx: RunContext | None, data: bytes, label: str, mimetype: str | None) -> str:
    if ctx is None:
        return f"[{mimetype or 'binary'} content, {len(data):,} bytes: not kept (no file store)]"
    stem = label.rsplit("/", 1)[-1] or "content"
    meta = ctx.files.put(data, name=stem, mimetype=mimetype, source="tool")
    return f"[{mimetype or 'binary'} saved as file {meta.id} ({meta.name}, {len(data):,} bytes)]"
