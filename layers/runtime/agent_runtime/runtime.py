"""Wiring shared by the CLI and the Lambda handlers: the model for a workflow, the default tools."""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TextIO

from .config import RuntimeConfig
from .context import ContextEngine
from .files import FileStore
from .files.tools import FILE_TOOLS
from .hooks import Hook
from .loop import Agent
from .models import Model, OpenAIChatModel, RetryPolicy
from .testing.demo import demo_script
from .testing.server import ScriptedServer
from .tools import ToolRegistry
from .workflows import Workflow


def default_tools() -> ToolRegistry:
    """The tools every workflow gets."""
    return ToolRegistry(FILE_TOOLS)


@contextmanager
def open_model(workflow: Workflow, config: RuntimeConfig, *, notice: TextIO | None = None) -> Iterator[Model]:
    """The workflow's model: the configured OpenAI-compatible endpoint, or the embedded demo model.

    The demo model is a real HTTP server on 127.0.0.1 reached through the real ``openai`` client.
    """
    retry = RetryPolicy(max_attempts=config.model_max_attempts)
    if not config.use_demo_model:
        yield OpenAIChatModel(workflow.model.name, retry=retry, timeout=config.model_timeout_seconds)
        return
    with ScriptedServer(demo_script(), model=workflow.model.name) as server:
        print(
            f"agent-runtime: OPENAI_API_KEY and OPENAI_BASE_URL are unset: using the embedded demo model "
            f"at {server.base_url}",
            file=notice or sys.stderr,
        )
        yield OpenAIChatModel(workflow.model.name, client=server.client(), retry=retry)


def build_agent(
    workflow: Workflow, model: Model, *, files: FileStore | None = None, hooks: Sequence[Hook] = ()
) -> Agent:
    """An agent with the default tools and the context engine first in the hook chain."""
    tools = default_tools()
    engine = ContextEngine(workflow, tools, model=model)
    return Agent(workflow, model, tools=tools, files=files, hooks=[engine, *hooks])
