"""A reply asking for many parallel tool calls, run through the real loop: for its test and the context bench."""

from __future__ import annotations

from agent_runtime import build_agent
from agent_runtime.models import OpenAIChatModel
from agent_runtime.testing import ScriptedRequest, ScriptedServer, calls, reply
from agent_runtime.tools import tool
from agent_runtime.workflows import parse_workflow

BUDGET, CAP = 16_000, 40


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"value of {key[:60]}: ok"


def workflow() -> object:
    model = {"name": "gpt-4.1", "context_window": 1_047_576, "max_output_tokens": 2048}
    data = {"name": "w", "description": "d", "prompt": "You look things up.", "model": model,
            "limits": {"max_tool_calls": CAP}, "context": {"context_budget": BUDGET}}  # fmt: skip
    return parse_workflow(data, file="w.yaml")


def answer(request: ScriptedRequest):
    return reply("summary of what was looked up") if request.is_compaction() else reply("answered: 40 keys")


def run(count: int, argument_chars: int):
    pad = "y" * argument_chars
    steps = [calls(*[("lookup", {"key": f"k{i}-{pad}"}) for i in range(count)]), *[answer] * 6]
    with ScriptedServer(steps) as server:
        record = build_agent(workflow(), OpenAIChatModel("gpt-4.1", client=server.client()), tools=[lookup]).run("go")
    return record, server.requests
