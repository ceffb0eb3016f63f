"""A run that looks things up until its spend limit stops it, and the bill its cost is checked against."""

from __future__ import annotations

import threading
from typing import Any

from agent_runtime.models.prices import Prices, prices_for
from agent_runtime.testing import ScriptedRequest, call, reply
from agent_runtime.tools import tool
from agent_runtime.workflows import parse_workflow

GPT41 = prices_for("gpt-4.1")
assert GPT41 is not None
HELPER = "You are a helper agent"


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"{key}: " + "lorem ipsum " * 150


def workflow(max_cost: float | None = None, **model: Any) -> Any:
    limits: dict[str, Any] = {"max_tool_calls": 500} | ({"max_cost": max_cost} if max_cost else {})
    settings = {"name": "gpt-4.1", "context_window": 1_047_576, "max_output_tokens": 1024} | model
    return parse_workflow({"name": "w", "description": "d", "prompt": "You look things up.", "model": settings,
                           "limits": limits}, file="w.yaml")  # fmt: skip


def forever(request: ScriptedRequest) -> Any:
    if request.body.get("tool_choice") == "none":
        return reply("stopped at the limit: looked up what I could")
    return call("lookup", {"key": f"k{request.index}"})


class Billing:
    """What the endpoint billed: every usage it reported (or would have reported, when it reports none)."""

    def __init__(self, report: Any = True) -> None:
        self.billed: list[dict[str, int]] = []
        self.report = report
        self._lock = threading.Lock()

    def __call__(self, usage: dict[str, Any]) -> Any:
        flat = {k: usage[k] for k in ("prompt_tokens", "completion_tokens", "total_tokens")}
        flat["cached_tokens"] = usage["prompt_tokens_details"]["cached_tokens"]
        with self._lock:
            self.billed.append(flat)
        return usage if self.report is True else self.report(usage) if callable(self.report) else None

    def cost(self, prices: Prices) -> float:
        return sum(prices.cost(usage) for usage in self.billed)
