"""``tools.python`` and ``script:`` references checked from their source alone (``workflows validate --offline``).

An offline check is a CI step's: it may run where the tools' dependencies are not installed, and should run none
of their code. So the module is found on the path as an import would find it (the interpreter's, then the tools
folders) without importing anything — not even a package's ``__init__`` — parsed, and the name looked up among
what its top level binds. What only running it shows (a dependency not installed, an exception at import) is
``validate``'s without ``--offline``, and a run's; the words of each problem are the import's own
(``toolsets/python.py``), so a problem reads the same whichever found it.
"""

from __future__ import annotations

import ast
import importlib.machinery
import sys
from collections.abc import Iterator, Sequence
from importlib.machinery import ModuleSpec
from pathlib import Path

from .python import import_failure, meant, tools_modules


def source_problem(ref: str, where: str, path: Sequence[str], *, tool: bool) -> str | None:
    """What is wrong with ``ref`` (``module:name``, or a whole module when ``tool``) as its source says; None when
    nothing is seen. ``tool``: the name must be a ``@tool`` (a plain ``def`` is said), else a function."""
    folders = [str(Path(p).resolve()) for p in path if Path(p).is_dir()]
    module_name, _, attribute = ref.partition(":")
    spec, missing = _find(module_name, [*sys.path, *folders])
    if spec is None:
        hint = meant(module_name, tools_modules(folders), "modules") or "; is it on AGENT_TOOLS_PATH?"
        return f"{where}: cannot import {module_name!r} (No module named {missing!r}){hint}"
    if not (spec.origin and spec.origin.endswith(".py")):
        return None  # compiled, or a namespace package: nothing to read, nothing said
    try:
        source = Path(spec.origin).read_bytes()
        bound = _bound(ast.parse(source, filename=spec.origin).body)
    except SyntaxError as error:
        return f"{where}: importing {module_name!r} failed: {import_failure(error)}"
    except (OSError, ValueError) as error:  # unreadable, or a null byte in it
        return f"{where}: cannot read {spec.origin}: {error}"
    if not attribute or bound is None:  # a whole module, or one that binds names by `import *`: any may be there
        return None
    return _named(bound, module_name, attribute, where, tool=tool)


def _named(bound: dict[str, ast.stmt], module_name: str, attribute: str, where: str, *, tool: bool) -> str | None:
    defined = {name: node for name, node in bound.items() if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)}
    found = bound.get(attribute)
    if found is None:
        if tool:
            tools = [name for name, node in defined.items() if node.decorator_list]
            return f"{where}: {module_name} has no {attribute!r}{meant(attribute, tools, 'tools')}"
        return f"{where}: {module_name} has no function {attribute!r}{meant(attribute, list(defined), 'functions')}"
    if tool and isinstance(found, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and not found.decorator_list:
        return f"{where}: {attribute!r} is not a tool; decorate it with @tool"
    return None


def _find(module_name: str, roots: list[str]) -> tuple[ModuleSpec | None, str]:
    """The module's spec, each package of its name looked for in the one above (nothing run); or None and the
    first name not found."""
    parts = module_name.split(".")
    locations: list[str] | None = roots
    spec = None
    for i in range(len(parts)):
        name = ".".join(parts[: i + 1])
        spec = importlib.machinery.PathFinder.find_spec(name, locations) if locations is not None else None
        if spec is None:
            return None, name
        locations = list(spec.submodule_search_locations or []) or None
    return spec, ""


def _bound(body: list[ast.stmt]) -> dict[str, ast.stmt] | None:
    """The names a module's top level binds, each with its statement (None: a ``from … import *`` binds any)."""
    found: dict[str, ast.stmt] = {}
    for node, name in _bindings(body):
        if name == "*":
            return None
        found[name] = node  # the last binding, as the module's namespace would hold it
    return found


def _bindings(body: list[ast.stmt]) -> Iterator[tuple[ast.stmt, str]]:
    """Each (statement, name) the top level binds, blocks (if, try, with, loops) included, no function's body."""
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node, node.name
        elif isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                yield node, alias.asname or alias.name.split(".")[0]
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                yield from (
                    (node, n.id) for n in ast.walk(target) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                )
        else:
            for block in ("body", "orelse", "finalbody"):
                yield from _bindings([n for n in getattr(node, block, []) if isinstance(n, ast.stmt)])
            for handler in getattr(node, "handlers", []):
                yield from _bindings(handler.body)
