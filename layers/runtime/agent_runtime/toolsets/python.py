"""``tools.python``: ``@tool`` functions by ``module:function`` (or every one of a ``module``), from a tools layer
in Lambda (``/opt/python``, on the path already) or from ``AGENT_TOOLS_PATH`` locally (folders, separated like
``PATH``)."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Callable, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType
from typing import Any, cast

from ..errors import ConfigError
from ..tools.decorator import Tool

PYTHON_TOOL_SECONDS = 300.0  # a declared Python tool's call, at most (and never past the run's deadline)


class _ToolsFinder(importlib.abc.MetaPathFinder):
    """Finds top-level modules in the tools folders (after everything else): the interpreter's own path is left
    as it is, and a package's submodules are found through its ``__path__`` as usual."""

    def __init__(self) -> None:
        self.folders: list[str] = []

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if path is not None or not self.folders:
            return None
        return importlib.machinery.PathFinder.find_spec(name, self.folders)


_FINDER = _ToolsFinder()


def python_tools(refs: Sequence[str], path: Sequence[str] = ()) -> list[Tool]:
    for folder in path:
        resolved = str(Path(folder).resolve())
        if Path(resolved).is_dir() and resolved not in _FINDER.folders:
            _FINDER.folders.append(resolved)
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
    return [item for ref in refs for item in ([_load(ref)] if ":" in ref else _module(ref))]


def script_function(ref: str, path: Sequence[str] = ()) -> Callable[..., Any]:
    """A workflow's coordinator function (``script: module:function``), found as ``tools.python`` finds tools."""
    python_tools((), path)
    module_name, _, attribute = ref.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(
            f"script {ref!r}: cannot import {module_name!r} ({error}); is it on AGENT_TOOLS_PATH?"
        ) from None
    found = getattr(module, attribute, None)
    if not callable(found):
        raise ConfigError(f"script {ref!r}: {module_name} has no function {attribute!r}")
    return cast(Callable[..., Any], found)


def _import(module_name: str, where: str) -> ModuleType:
    try:
        return importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"{where}: cannot import {module_name!r} ({error}); is it on AGENT_TOOLS_PATH?") from None


def _module(ref: str) -> list[Tool]:
    """A whole module: every ``@tool`` it defines or imports, in the module's order (a toolset to attach whole)."""
    found = [item for item in vars(_import(ref, f"tools.python {ref!r}")).values() if isinstance(item, Tool)]
    if not found:
        raise ConfigError(f"tools.python {ref!r}: the module has no @tool functions")
    return [
        item if item.timeout is not None else dataclasses.replace(item, timeout=PYTHON_TOOL_SECONDS) for item in found
    ]


def _load(ref: str) -> Tool:
    module_name, _, attribute = ref.partition(":")
    where = f"tools.python {ref!r}"
    module = _import(module_name, where)
    found = getattr(module, attribute, None)
    if found is None:
        raise ConfigError(f"{where}: {module_name} has no {attribute!r}")
    if not isinstance(found, Tool):
        raise ConfigError(f"{where}: {attribute!r} is not a tool; decorate it with @tool")
    return found if found.timeout is not None else dataclasses.replace(found, timeout=PYTHON_TOOL_SECONDS)
