"""The tool-search benchmark's material: the captured catalogue served by real MCP servers, the cases, and a
price model of the prompt cache over the requests a run really sent."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import yaml
from agent_runtime.context import TokenCounter
from agent_runtime.models.prices import prices_for
from agent_runtime.toolsearch.index import Entry
from agent_runtime.workflows import Workflow, parse_workflow
from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from mcp_types import Tool as McpTool

from tests.toolsets_support import serve_mcp

HERE = Path(__file__).parent
CATALOGUE: dict[str, Any] = json.loads((HERE / "catalogue.json").read_text())
CASES: list[dict[str, Any]] = yaml.safe_load((HERE / "cases.yaml").read_text())["cases"]
COUNTER = TokenCounter("gpt-4.1")
RESULT_WORDS = 220  # a found tool's answer: ~300 tokens of text


def servers(limit: int | None = None) -> list[dict[str, Any]]:
    """The captured servers; with ``limit``, ``limit`` tools in all: the largest server loses its last ones."""
    kept = [dict(server) for server in CATALOGUE["servers"]]
    over = sum(len(server["tools"]) for server in kept) - (limit or 10**9)
    if over > 0:
        largest = max(kept, key=lambda server: len(server["tools"]))
        largest["tools"] = largest["tools"][:-over]
    return kept


def entries() -> list[Entry]:
    return [Entry(f"{s['name']}_{t['name']}", t.get("description") or "",
                  tuple((t.get("inputSchema") or {}).get("properties") or {}), group=s["name"])
            for s in CATALOGUE["servers"] for t in s["tools"]]  # fmt: skip


class Replay(MCPServer):
    """A real MCP server (the mcp package's, over streamable HTTP) that lists a captured server's tools exactly
    as captured, and answers every call with a line naming it and some text (its own words are not the point)."""

    def __init__(self, captured: dict[str, Any], called: list[str]) -> None:
        super().__init__(captured["name"])
        self.captured, self.called = captured, called

    async def list_tools(self) -> list[McpTool]:
        listed = []
        for item in self.captured["tools"]:
            hints = item.get("annotations") or {}
            annotations = ToolAnnotations(read_only_hint=hints.get("readOnlyHint"), title=hints.get("title"))
            listed.append(McpTool(name=item["name"], description=item.get("description"),
                                  input_schema=item["inputSchema"], annotations=annotations))  # fmt: skip
        return listed

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> CallToolResult:
        self.called.append(f"{self.captured['name']}_{name}")
        words = " ".join(f"line {n} of what {name} returns for {json.dumps(arguments)[:60]}" for n in range(30))
        return CallToolResult(content=[TextContent(type="text", text=" ".join(words.split()[:RESULT_WORDS]))])


@contextmanager
def serve(captured: Sequence[dict[str, Any]]) -> Iterator[tuple[dict[str, str], list[str]]]:
    called: list[str] = []
    with ExitStack() as stack:
        urls = {server["name"]: stack.enter_context(serve_mcp(Replay(server, called))) for server in captured}
        yield urls, called


def workflow(urls: dict[str, str], tmp: Path, *, tools: dict[str, Any] | None = None, **extra: Any) -> Workflow:
    """gpt-4.1 with a 128k window (``extra`` adds or replaces sections), every served server attached whole."""
    data = {
        "name": "bench-tools",
        "description": "tool search benchmark",
        "prompt": "You help the team with its repositories, incidents, pages, files and chat.",
        "model": {"name": "gpt-4.1", "context_window": 128_000, "max_output_tokens": 1024},
        "limits": {"max_tool_calls": 100},
        "tools": {"mcp": [{"name": name, "url": url} for name, url in urls.items()], "approval": "never"}
        | (tools or {}),
    } | extra
    return parse_workflow(data, file=str(tmp / "bench-tools.yaml"), base_dir=tmp)


def prompt_tokens(body: dict[str, Any]) -> int:
    return COUNTER.messages(body.get("messages", [])) + COUNTER.tools(body.get("tools", []))


def input_cost(bodies: Sequence[dict[str, Any]]) -> tuple[float, int, int]:
    """What the requests' prompts cost with a prompt cache that keeps every prefix it has seen (OpenAI's: from
    1,024 tokens, in 128-token steps; the tools come first): dollars, prompt tokens, cached tokens."""
    seen: list[tuple[str, list[str]]] = []
    dollars, total, cached_total = 0.0, 0, 0
    for body in bodies:
        tools = json.dumps(body.get("tools", []), sort_keys=True)
        keys = [json.dumps(m, sort_keys=True) for m in body.get("messages", [])]
        shared = 0
        for earlier_tools, earlier in seen:
            if earlier_tools != tools:
                continue
            common = next((i for i, (a, b) in enumerate(zip(keys, earlier, strict=False)) if a != b),
                          min(len(keys), len(earlier)))  # fmt: skip
            shared = max(shared, common)
        seen.append((tools, keys))
        prefix = COUNTER.tools(body.get("tools", [])) + COUNTER.messages(body["messages"][:shared]) if shared else 0
        prompt = prompt_tokens(body)
        cached = (prefix // 128) * 128 if prefix >= 1024 else 0
        prices = prices_for(body.get("model", "gpt-4.1"))
        assert prices is not None
        dollars += prices.cost({"prompt_tokens": prompt, "cached_tokens": cached, "completion_tokens": 0})
        total, cached_total = total + prompt, cached_total + cached
    return dollars, total, cached_total
