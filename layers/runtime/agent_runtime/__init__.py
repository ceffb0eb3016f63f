"""agent_runtime: a serverless agent runtime for AWS Lambda with a context engine built for huge files.

The public surface is small: build an :class:`Agent` from a :class:`Workflow` and a :class:`Model`, give it
tools, run it, read the :class:`RunRecord`.

Names are imported lazily (PEP 562): ``import agent_runtime.extract`` or a webhook handler does not pay for
the openai client, pydantic and tiktoken until something actually uses them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS = {
    "Agent": "loop",
    "Final": "loop",
    "RanTools": "loop",
    "Run": "loop",
    "Stopped": "loop",
    "Suspended": "loop",
    "Deadline": "deadline",
    "AgentRuntimeError": "errors",
    "ConfigError": "errors",
    "RunError": "errors",
    "ToolError": "errors",
    "Hook": "hooks",
    "ContextLengthExceededError": "models",
    "Model": "models",
    "ModelError": "models",
    "OpenAIChatModel": "models",
    "RunRecord": "record",
    "RunState": "record",
    "RunStatus": "record",
    "RunContext": "run_context",
    "Tool": "tools",
    "ToolRegistry": "tools",
    "tool": "tools",
    "Workflow": "workflows",
    "WorkflowError": "workflows",
    "load_workflow": "workflows",
    "build_agent": "runtime",
    "Services": "deployment",
    "ToolEnv": "toolsets",
    "Credential": "credentials",
    "requester_credential": "credentials",
}

__all__ = [
    "Agent",
    "AgentRuntimeError",
    "ConfigError",
    "ContextLengthExceededError",
    "Credential",
    "Deadline",
    "Final",
    "Hook",
    "Model",
    "ModelError",
    "OpenAIChatModel",
    "RanTools",
    "Run",
    "RunContext",
    "RunError",
    "RunRecord",
    "RunState",
    "RunStatus",
    "Services",
    "Stopped",
    "Suspended",
    "Tool",
    "ToolEnv",
    "ToolError",
    "ToolRegistry",
    "Workflow",
    "WorkflowError",
    "__version__",
    "build_agent",
    "load_workflow",
    "requester_credential",
    "tool",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_runtime' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value  # once resolved, a plain attribute
    return value


if TYPE_CHECKING:
    from .credentials import Credential, requester_credential
    from .deadline import Deadline
    from .deployment import Services
    from .errors import AgentRuntimeError, ConfigError, RunError, ToolError
    from .hooks import Hook
    from .loop import Agent, Final, RanTools, Run, Stopped, Suspended
    from .models import ContextLengthExceededError, Model, ModelError, OpenAIChatModel
    from .record import RunRecord, RunState, RunStatus
    from .run_context import RunContext
    from .runtime import build_agent
    from .tools import Tool, ToolRegistry, tool
    from .toolsets import ToolEnv
    from .workflows import Workflow, WorkflowError, load_workflow
