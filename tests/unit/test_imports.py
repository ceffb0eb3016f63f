"""Every module of the package imports (on each Python the package supports: a syntax or standard-library name of
a newer Python fails here, on 3.11, before any feature test does). Optional extras a module needs (the mcp client,
OpenTelemetry) are installed in the dev environment."""

from __future__ import annotations

import importlib
import pkgutil

import agent_runtime


def test_every_module_imports() -> None:
    found = pkgutil.walk_packages(agent_runtime.__path__, "agent_runtime.")
    names = [m.name for m in found if m.name != "agent_runtime.__main__"]  # that one runs the CLI
    assert len(names) > 150
    failed = []
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as error:
            failed.append(f"{name}: {type(error).__name__}: {error}")
    assert failed == []
