"""Workflow definitions: ``workflows/<name>.yaml``, loaded and validated with clear errors.

Exports are lazy (PEP 562, ``_lazy``): a module that needs one section's settings (``workflows.triggers`` for
routing) or only the ``Workflow`` type does not load the YAML parser and the whole schema with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .exceptions import Problem, WorkflowError
    from .loader import apply_overrides, available_workflows, load_workflow, resolve_workflow_path
    from .schema import Limits, ModelSettings, Workflow, parse_workflow

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "Problem": ".exceptions",
        "WorkflowError": ".exceptions",
        "apply_overrides": ".loader",
        "available_workflows": ".loader",
        "load_workflow": ".loader",
        "resolve_workflow_path": ".loader",
        "Limits": ".schema",
        "ModelSettings": ".schema",
        "Workflow": ".schema",
        "parse_workflow": ".schema",
    },
)

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
