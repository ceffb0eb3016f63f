"""Workflow definitions: ``workflows/<name>.yaml``, loaded and validated with clear errors."""

from __future__ import annotations

from .exceptions import Problem, WorkflowError
from .loader import apply_overrides, available_workflows, load_workflow, resolve_workflow_path
from .schema import Limits, ModelSettings, Workflow, parse_workflow

__all__ = [
    "Limits",
    "ModelSettings",
    "Problem",
    "Workflow",
    "WorkflowError",
    "apply_overrides",
    "available_workflows",
    "load_workflow",
    "parse_workflow",
    "resolve_workflow_path",
]
