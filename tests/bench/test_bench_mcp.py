"""MCP tool calls: the runtime's overhead over the raw HTTP round trip, and the cold-start cost of listing tools.

Side by side against the same `mcp` server (uvicorn on 127.0.0.1):
* raw — the same `tools/call` JSON-RPC request POSTed with httpx2 on a session of its own, read up to the answer's
  event (the floor: the server's own work plus one HTTP round trip);
* tool — `Tool.invoke` on the runtime's MCP tool (argument check against the schema, the hop to the session's
  event loop, the `mcp` client, the result rendered for the model).
Target: the median overhead (tool - raw) is at most 5 ms. Cold start: a new session's handshake plus listing,
against one raw HTTP round trip.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import statistics
import time

import httpx2
from agent_runtime.toolsets.mcp import McpSession, mcp_tools
from agent_runtime.toolsets.secrets import Redactor
from agent_runtime.workflows.tools import McpServerSettings

from tests.toolsets_support import notes_server, serve_mcp

CALLS = 300
RUNS = 5


async def _raw_call(client: httpx2.AsyncClient, url: str, session_id: str, ids: itertools.count[int]) -> None:
    body = {"jsonrpc": "2.0", "id": next(ids), "method": "tools/call",
            "params": {"name": "search", "arguments": {"query": "retries"}}}  # fmt: skip
    headers = {"mcp-session-id": session_id, "accept": "application/json, text/event-stream",
               "content-type": "application/json", "mcp-protocol-version": "2025-06-18"}  # fmt: skip
    async with client.stream("POST", url, content=json.dumps(body), headers=headers) as response:
        assert response.status_code == 200
        async for line in response.aiter_lines():  # the answer is one event: read it, as a client does
            if line.startswith("data:"):
                assert "Webhook retries" in line, line[:300]
                return
    raise AssertionError("no answer event")


async def _session_id(client: httpx2.AsyncClient, url: str) -> str:
    """A raw session of its own: initialize, then the initialized notification."""
    headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello}
    response = await client.post(url, content=json.dumps(init), headers=headers)
    session = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    await client.post(url, content=json.dumps(note), headers=headers | {"mcp-session-id": session})
    return session


def test_mcp_call_overhead_and_cold_listing() -> None:
    with serve_mcp(notes_server()) as url:
        settings = McpServerSettings(name="notes", url=url, allow=("search",))
        rows = []
        for _ in range(RUNS):
            started = time.perf_counter()
            session = McpSession(settings, {}, Redactor())
            [search] = mcp_tools(settings, session)
            cold_ms = (time.perf_counter() - started) * 1000
            loop = asyncio.new_event_loop()  # the raw client is async too, as the mcp client's transport is
            client = httpx2.AsyncClient(timeout=10)
            raw_session, ids = loop.run_until_complete(_session_id(client, url)), itertools.count(1)
            raw, ours = [], []
            for _ in range(CALLS):  # interleaved: both see the same machine state
                t = time.perf_counter()
                loop.run_until_complete(_raw_call(client, url, raw_session, ids))
                raw.append((time.perf_counter() - t) * 1000)
                t = time.perf_counter()
                assert "Webhook retries" in search.invoke({"query": "retries"})
                ours.append((time.perf_counter() - t) * 1000)
            loop.run_until_complete(client.aclose())
            loop.close()
            session.close()
            rows.append((statistics.median(raw), statistics.median(ours), cold_ms))
        raw_ms, tool_ms, cold = (statistics.median(column) for column in zip(*rows, strict=True))
    print(f"\nMCP tools/call, median of {RUNS} runs x {CALLS} calls (ms):")
    print(f"  raw HTTP round trip   {raw_ms:7.2f}")
    print(f"  runtime MCP tool      {tool_ms:7.2f}   overhead {tool_ms - raw_ms:+.2f} ms ({tool_ms / raw_ms:.2f}x)")
    print(f"  cold: handshake + list {cold:7.1f} ms ({cold / raw_ms:.1f} round trips)")
    assert tool_ms - raw_ms <= 5.0, f"overhead {tool_ms - raw_ms:.2f} ms over the 5 ms target"
