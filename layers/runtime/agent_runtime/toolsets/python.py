"""``tools.python``: ``@tool`` functions by ``module:function`` (or every one of a ``module``), from a tools layer
in Lambda (``/opt/python``, on the path already) or from ``AGENT_TOOLS_PATH`` locally (folders, separated like
``PATH``)."""

from __future__ import annotations

import dataclasses
import difflib
import importlib
import importlib.abc
import importlib.machinery
import inspect
import pkgutil
import sys
import traceback
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
    # The path asked for now comes first, in its order: folders an earlier call named (another AGENT_TOOLS_PATH in
    # the same process: tests, a playground) never shadow a module of the same name in it.
    wanted = [resolved for folder in path if Path(resolved := str(Path(folder).resolve())).is_dir()]
    wanted = list(dict.fromkeys(wanted))
    _FINDER.folders[:] = wanted + [folder for folder in _FINDER.folders if folder not in wanted]
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)
    return [item for ref in refs for item in ([_load(ref)] if ":" in ref else _module(ref))]


def script_function(ref: str, path: Sequence[str] = ()) -> Callable[..., Any]:
    """A workflow's coordinator function (``script: module:function``), found as ``tools.python`` finds tools."""
    python_tools((), path)
    module_name, _, attribute = ref.partition(":")
    module = _import(module_name, f"script {ref!r}")
    found = getattr(module, attribute, None)
    if not callable(found):
        functions = [name for name, item in vars(module).items() if inspect.isfunction(item)]
        said = meant(attribute, functions, "functions")
        raise ConfigError(f"script {ref!r}: {module_name} has no function {attribute!r}{said}")
    return cast(Callable[..., Any], found)


def _import(module_name: str, where: str) -> ModuleType:
    """The user's module, or a ConfigError of one line: whatever its import raised (a syntax error, an exception
    at its top level, even ``sys.exit``) is the module's fault, said with where, never a traceback."""
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if not error.name or not _missing(module_name, error.name):
            raise ConfigError(f"{where}: importing {module_name!r} failed: {import_failure(error)}") from None
        hint = meant(module_name, tools_modules(_FINDER.folders), "modules")
        raise ConfigError(
            f"{where}: cannot import {module_name!r} ({error}){hint or '; is it on AGENT_TOOLS_PATH?'}"
        ) from None
    except (Exception, SystemExit) as error:
        raise ConfigError(f"{where}: importing {module_name!r} failed: {import_failure(error)}") from None


def import_failure(error: BaseException) -> str:
    """``file line N: Type: message`` in one line: for a syntax error the line the parser stopped at; for an
    exception the deepest line of the first file of the user's own it passed through (the module's, or a helper
    the module imports), the importer's frames skipped."""
    if isinstance(error, SyntaxError):
        where, message = f"{error.filename} line {error.lineno}", error.msg
    else:
        frames = [f for f in traceback.extract_tb(error.__traceback__) if _users(f.filename)]
        own = [f for f in frames if frames and f.filename == frames[0].filename]
        where, message = (f"{own[-1].filename} line {own[-1].lineno}" if own else "?"), str(error)
    said = " ".join(f"{type(error).__name__}: {message}".split())  # one line, whatever the message holds
    return f"{where}: {said[:_SAID]}" + ("..." if len(said) > _SAID else "")


def meant(name: str, known: Sequence[str], what: str) -> str:
    """``; did you mean 'restart_service'?`` for a slip of a known name, else the known names (a few)."""
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    if close:
        return f"; did you mean {close[0]!r}?"
    return f" (its {what}: {', '.join(sorted(known)[:12])})" if known and what in ("tools", "functions") else ""


def tools_modules(folders: Sequence[str]) -> list[str]:
    """The top-level modules and packages in the tools folders (what a slip of a module's name likely meant)."""
    return sorted({module.name for module in pkgutil.iter_modules(list(folders))})


def _missing(module_name: str, missing: str) -> bool:
    """The module asked for (or a package above it) is not found: its folder is not on the path. Anything else
    missing is a module the user's imports, said with the line that imports it."""
    return module_name == missing or module_name.startswith(f"{missing}.")


_SAID = 300  # characters of an exception's message said: enough to recognise it, never a page of it
_IMPORTER = (importlib.__file__ or "", __file__)


def _users(filename: str) -> bool:
    """A frame of the user's code: not the import machinery (frozen or importlib's) and not this module."""
    return not filename.startswith("<") and filename not in _IMPORTER


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
        tools = [name for name, item in vars(module).items() if isinstance(item, Tool)]
        raise ConfigError(f"{where}: {module_name} has no {attribute!r}{meant(attribute, tools, 'tools')}")
    if not isinstance(found, Tool):
        raise ConfigError(f"{where}: {attribute!r} is not a tool; decorate it with @tool")
    return found if found.timeout is not None else dataclasses.replace(found, timeout=PYTHON_TOOL_SECONDS)
