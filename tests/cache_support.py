"""Tools whose outputs have known sizes in tokens, and OpenAI's count of a request: for masking, folding, cache."""

from __future__ import annotations

import random
from typing import Any

from agent_runtime.context import TokenCounter
from agent_runtime.tools import tool

COUNTER = TokenCounter("gpt-4.1")
WORDS = [f"{w}{i}" for w in ("alpha", "delta", "sigma", "omega") for i in range(30)]


def prose(tokens: int, seed: int, tag: str) -> str:
    rng = random.Random(seed)
    words = [rng.choice(WORDS) for _ in range(max(1, int(tokens * 0.6)))]
    words.insert(len(words) // 2, tag)
    return "\n".join(" ".join(words[i : i + 14]) for i in range(0, len(words), 14))


@tool
def read(n: int, size: int) -> str:
    """Read section n.

    Args:
        n: Section.
        size: Its size in tokens.
    """
    return prose(size, n, f"SEC-{n}")


@tool(maskable=False)
def compute(n: int, size: int) -> str:
    """Compute something (its result is a conclusion: never masked).

    Args:
        n: Job.
        size: Its size in tokens.
    """
    return prose(size, n, f"JOB-{n}")


@tool(mutating=True)
def act(n: int) -> str:
    """Do something that changes the world.

    Args:
        n: Action.
    """
    return f"done ACT-{n}"


def exact(body: dict[str, Any]) -> int:
    return COUNTER.messages(body["messages"]) + COUNTER.tools(body.get("tools", []))
