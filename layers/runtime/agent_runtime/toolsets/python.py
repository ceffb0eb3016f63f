"""``tools.python``: ``@tool`` functions by ``module:function``, from a tools layer in Lambda (``/opt/python``, on
the path already) or from ``AGENT_TOOLS_PATH`` locally (folders, separated like ``PATH``)."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from ..errors import ConfigError
from ..tools.decorator import Tool


def python_tools(refs: Sequence[str], path: Sequence[str] = ()) -> list[Tool]:
    for folder in reversed(path):
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)
    return [_load(ref) for ref in refs]


def _load(ref: str) -> Tool:
    module_name, _, attribute = ref.partition(":")
    where = f"tools.python {ref!r}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise ConfigError(f"{where}: cannot import {module_name!r} ({error}); is it on AGENT_TOOLS_PATH?") from None
    found = getattr(module, attribute, None)
    if found is None:
        raise ConfigError(f"{where}: {module_name} has no {attribute!r}")
    if not isinstance(found, Tool):
        raise ConfigError(f"{where}: {attribute!r} is not a tool; decorate it with @tool")
    return found
