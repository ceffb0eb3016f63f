"""Workflows with declared tools, and the agent running one with the tests' secrets, a local store, an approver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml
from agent_runtime import Services
from agent_runtime.approvals.approvers import FixedApprover
from agent_runtime.runtime import build_agent
from agent_runtime.stores import LocalStore, RunStore, StoreFileStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer
from agent_runtime.toolsets import ToolEnv
from agent_runtime.workflows import Workflow, parse_workflow

from tests.conftest import model_for

SECRETS = {"notes_token": "notes-secret-456", "billing_token": "billing-secret-123"}


def workflow(tmp_path: Path, tools: dict[str, Any]) -> Workflow:
    data = {
        "name": "tooled",
        "description": "uses declared tools",
        "prompt": "You help.",
        "model": {"name": "gpt-4o", "context_window": 128_000, "max_output_tokens": 1024},
        "tools": tools,
    }
    path = tmp_path / "tooled.yaml"
    path.write_text(yaml.safe_dump(data))
    return replace(parse_workflow(data, file=str(path), base_dir=tmp_path), path=path)


def seen_by(requests: list[ScriptedRequest], step: Any) -> Callable[[ScriptedRequest], Any]:
    def respond(request: ScriptedRequest) -> Any:
        requests.append(request)
        return step

    return respond


def agent_for(server: ScriptedServer, flow: Workflow, tmp_path: Path, approver: Any = None, **env: Any) -> Any:
    store = LocalStore(tmp_path / "state")
    tool_env = ToolEnv(secrets=SECRETS.get, **env)
    return build_agent(
        flow,
        model_for(server),
        Services(runs=RunStore(store), tool_env=tool_env, approver=approver or FixedApprover(True, "the test")),
        files=StoreFileStore(store, "thread#T"),
    )


def billing_workflow(tmp_path: Path, root: str, **extra: Any) -> Workflow:
    source = {"name": "billing", "spec": f"{root}/openapi.json", "base_url": f"{root}/api",
              "headers": {"Authorization": "Bearer ${secret:billing_token}"}, **extra}  # fmt: skip
    return workflow(tmp_path, {"openapi": [source]})
