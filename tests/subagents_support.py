"""Sub-agents on one scripted server: the child's own script, a parent with sub-agents, a long document to read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from agent_runtime.files import InMemoryFileStore
from agent_runtime.runtime import build_agent
from agent_runtime.subagents import SubagentSettings
from agent_runtime.testing import ScriptedRequest, ScriptedServer

from tests.conftest import make_workflow, model_for


def is_child(request: ScriptedRequest) -> bool:
    return request.system_text().startswith("You are a helper agent")


def child_script(*steps: Any) -> Callable[[ScriptedRequest], Any]:
    queue = list(steps)

    def serve(request: ScriptedRequest) -> Any:
        if not is_child(request):
            return None
        assert queue, "the child made more requests than scripted"
        step = queue.pop(0)
        return step(request) if callable(step) else step

    serve.queue = queue  # type: ignore[attr-defined]
    return serve


def parent(server: ScriptedServer, files: InMemoryFileStore, **settings: Any):
    workflow = make_workflow(max_tool_calls=settings.pop("max_tool_calls", 50))
    subagents = SubagentSettings(enabled=True, **settings)
    return build_agent(replace(workflow, subagents=subagents), model_for(server), files=files)


def long_doc(lines: int) -> bytes:
    return "\n".join(
        f"line {n}: clause {n} says the vendor SECRET-{n} must be kept" for n in range(1, lines + 1)
    ).encode()
