"""What a deployment gives the agents it builds: the :class:`Services` a process makes once, and the workflow as
this deployment runs it.

Apart from ``runtime.py`` (which builds agents) so that a process can hold them without loading an agent's
machinery: the worker's init makes its ``Services`` and its first run loads the model client, the context engine
and the tools (into the SnapStart snapshot, ``service.setup.prime_worker``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .access import RunAccess
    from .approvals import Approver
    from .config import RuntimeConfig
    from .identity import Connections
    from .sandbox import SandboxClient
    from .skills import SkillLibrary
    from .spend import GoOn, Scope
    from .stores import RunStore
    from .toolsets import ToolEnv
    from .workflows import Workflow


@dataclass(frozen=True, slots=True)
class Services:
    """What an agent is built with besides its workflow, model, files, hooks and tools: made once per process (the
    worker's, the CLI's, an eval's), with ``replace`` for what a message brings (its tool environment and origin,
    its thread, an approver's grant, its trace parent). ``depth`` counts sub-agent nesting."""

    config: RuntimeConfig | None = None
    skills: SkillLibrary | None = None
    runs: RunStore | None = None  # checkpoints, records and summaries are kept there (None: nothing is stored)
    sandbox: SandboxClient | None = None  # the python tool, when the workflow enables it
    tool_env: ToolEnv | None = None  # what declared tools need (secrets, chat clients, the origin); default: env
    approver: Approver | None = None  # decides calls that need approval; None: they are denied
    clock: Callable[[], float] = time.time
    trace_parent: Any = None
    thread_id: str | None = None
    granted: float = 0.0  # an approver's "continue with $N more" in this message
    go_on: GoOn | None = None  # how a stop at the run's or thread's limit says to go on (None: the CLI's words)
    access: RunAccess | None = None  # the workflow's access rules for this run's requester (None: no rules)
    budgets: tuple[Scope, ...] = ()  # the person's, teams' and workflow's budgets the run starts under
    identity: Connections | None = None  # who the run acts for, their tokens, who asks them to connect (None: nobody)
    depth: int = 0


def deployed(workflow: Workflow, config: RuntimeConfig) -> Workflow:
    """The workflow as this deployment runs it: ``AGENT_MODEL`` replaces its model, for its helpers too."""
    return workflow.with_model(config.model_override) if config.model_override else workflow
