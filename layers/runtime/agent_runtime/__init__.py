"""agent_runtime: a serverless agent runtime for AWS Lambda with a context engine built for huge files.

The public surface is small: build an :class:`Agent` from a :class:`Workflow` and a :class:`Model`, give it
tools, run it, read the :class:`RunRecord`.
"""

from __future__ import annotations

from .deadline import Deadline
from .errors import AgentRuntimeError, ConfigError, RunError, ToolError
from .hooks import Hook
from .loop import Agent, Final, RanTools, Run, Stopped, Suspended
from .models import ContextLengthExceededError, Model, ModelError, OpenAIChatModel
from .record import RunRecord, RunState, RunStatus
from .run_context import RunContext
from .tools import Tool, ToolRegistry, tool
from .workflows import Workflow, WorkflowError, load_workflow

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentRuntimeError",
    "ConfigError",
    "ContextLengthExceededError",
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
    "Stopped",
    "Suspended",
    "Tool",
    "ToolError",
    "ToolRegistry",
    "Workflow",
    "WorkflowError",
    "__version__",
    "load_workflow",
    "tool",
]
