"""A manual read section by section, and the agent reading it in an 8,000-token window: for compaction's tests."""

from __future__ import annotations

from typing import Any

from agent_runtime import Agent, ToolRegistry, tool
from agent_runtime.context import ContextEngine, ContextSettings
from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.testing import Reply, ScriptedServer, call

from tests.conftest import make_workflow, model_for


def paragraph(n: int, words: int = 300) -> str:
    return f"Section {n}: " + " ".join(f"word{n}x{i}" for i in range(words))


@tool
def fetch(n: int) -> str:
    """Fetch section n of the manual (about 1,500 tokens).

    Args:
        n: Section number.
    """
    return paragraph(n)


@tool(mutating=True)
def post_comment(text: str) -> str:
    """Post a comment on ticket PROJ-7.

    Args:
        text: The comment.
    """
    return f"posted comment 9001 on PROJ-7: {text}"


def agent(server: ScriptedServer, *, files: InMemoryFileStore | None = None, **settings: Any) -> Agent:
    # Compaction's own tactics, isolated: rolling masking (on by default) would keep this window from filling.
    workflow = make_workflow(
        window=8_000, output=1_000, context=ContextSettings(**{"mask_threshold_tokens": 0, **settings})
    )
    registry = ToolRegistry([*FILE_TOOLS, fetch, post_comment])
    model = model_for(server)
    return Agent(workflow, model, tools=registry, hooks=[ContextEngine(workflow, registry, model=model)], files=files)


def talkative(n: int) -> Reply:
    """A turn with a long assistant text and a tool call: masking alone cannot free enough."""
    return Reply(text=paragraph(50 + n, 250), calls=(call("fetch", {"n": n}).calls[0],))
