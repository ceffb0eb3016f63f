"""The package reads top-down, and every top-level name has its floor here (an unlisted one fails: a new module or
package says where it stands). A module imports only from its own floor or below; no two of them import each other,
by any path (no cycle of modules, nor of packages). From the top: the command line; the worker, serve and the
webhook app (``service``) beside the evals; the wiring (``runtime``); the test support; a script's coordinator; the
loop and the features it runs (sub-agents, declared toolsets, trigger sources, pages) beside serve's playground;
what comes in (``triggers``) and goes out (``chat``), the read side's figures and the loop's parts; the store, the
context engine, the sandbox; approvals, files, the record, skills; extraction, tools, spend and the workflow, which
holds each feature's settings (a feature imports its settings from the workflow, never the workflow a feature);
models and the read side's transcript and chart; the config, hooks, the run context, stopping and the typed read
side; and the ground: values and helpers every floor may use (errors, the inbound event, run events, messages, text
made inert or redacted). Checked over every import, lazy ones included; only ``if TYPE_CHECKING:`` blocks are left
out (annotations, not dependencies)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import PACKAGE, REPO

FLOORS = {
    "__main__": 14,
    "cli": 13,
    "evals": 12,
    "service": 12,
    "runtime": 11,
    "testing": 10,
    "demo_model": 10,
    "coordinator": 9,
    "loop": 8,
    "pages": 8,
    "playground": 8,
    "sources": 8,
    "subagents": 8,
    "toolsets": 8,
    "access": 7,
    "chat": 7,
    "identity": 7,
    "reading": 7,
    "toolsearch": 7,
    "trace": 7,
    "triggers": 7,
    "context": 6,
    "sandbox": 6,
    "steps": 6,
    "stores": 6,
    "approvals": 5,
    "files": 5,
    "record": 5,
    "skills": 5,
    "extract": 4,
    "spend": 4,
    "tools": 4,
    "workflows": 4,
    "models": 3,
    "telemetry": 3,
    "config": 2,
    "hooks": 2,
    "run_context": 2,
    "stopping": 2,
    "views": 2,
    "__init__": 1,
    "_lazy": 1,
    "actions": 1,
    "adf": 1,
    "capped": 1,
    "credentials": 1,
    "deadline": 1,
    "deployment": 1,
    "errors": 1,
    "events": 1,
    "ids": 1,
    "inbound": 1,
    "inert": 1,
    "messages": 1,
    "redaction": 1,
    "sections": 1,
    "snapstart": 1,
    "state": 1,
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def top(module: str) -> str:
    """The top-level name a module belongs to (``agent_runtime.stores.runs`` → ``stores``)."""
    parts = module.split(".")
    return parts[1] if len(parts) >= 2 else "__init__"


def floor(module: str) -> int | None:
    return FLOORS.get(top(module))


def imported(path: Path, module: str | None = None, *, with_annotations: bool = False) -> list[tuple[str, int]]:
    """The package modules ``path`` (module ``module``) imports, resolved, with their line, outside
    ``if TYPE_CHECKING:`` (inside too ``with_annotations``)."""
    module, found = module or module_name(path), []

    class Visitor(ast.NodeVisitor):
        def visit_If(self, node: ast.If) -> None:
            if with_annotations or not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                self.generic_visit(node)

        def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
            if node.level:
                base = module.split(".")[: None if path.name == "__init__.py" else -1]
                base = base[: len(base) - node.level + 1]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            if target.startswith("agent_runtime"):  # each name too: `from . import telemetry` imports a module
                found.extend((f"{target}.{alias.name}", node.lineno) for alias in node.names)

        def visit_Import(self, node: ast.Import) -> None:
            found.extend((alias.name, node.lineno) for alias in node.names if alias.name.startswith("agent_runtime"))

    Visitor().visit(ast.parse(path.read_text()))
    return found


def top_level_names() -> set[str]:
    return {top(module_name(path)) for path in PACKAGE.rglob("*.py")}


def test_every_top_level_name_has_its_floor() -> None:
    """Deny by default: a new module or package at the top says where it stands, or this fails."""
    assert sorted(top_level_names() - set(FLOORS)) == []
    assert sorted(set(FLOORS) - top_level_names()) == []  # and the map names nothing that is gone


def test_no_module_imports_one_above_it() -> None:
    upward = []
    for path in PACKAGE.rglob("*.py"):
        own = floor(module_name(path))
        for target, line in imported(path):
            theirs = floor(target)
            if own is not None and theirs is not None and theirs > own:
                upward.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert upward == []


def imports_between(level: int) -> dict[str, set[str]]:
    """Who imports whom: modules (``level`` 0, by module) or top-level names (``level`` 1)."""
    graph: dict[str, set[str]] = {}
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    for module, path in modules.items():
        source = top(module) if level else module
        for target, _ in imported(path):
            while level == 0 and target not in modules and "." in target:
                target = target.rsplit(".", 1)[0]  # a name imported from a module: the module
            other = top(target) if level else target
            if other != source and (level or other in modules):
                graph.setdefault(source, set()).add(other)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_cycle_of_modules_nor_of_packages() -> None:
    assert cycles(imports_between(0)) == []
    assert cycles(imports_between(1)) == []


def test_the_cycle_check_sees_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


# What a workflow's definition may import: the parsing helpers and the leaf values every floor shares
WORKFLOW_GROUND = (
    "agent_runtime.sections",
    "agent_runtime.errors",
    "agent_runtime.models.prices",
    "agent_runtime._lazy",  # the package's lazy exports (PEP 562), as other packages have
    "agent_runtime.workflows",
)


def test_the_workflow_imports_no_feature() -> None:
    """Every file under ``workflows/`` (lazy imports and annotations included) imports only its own package and
    the ground: moving a feature's settings back into the feature would tie the workflow to the feature's code."""
    found = [f"{path.relative_to(REPO)}:{line} imports {target}" for path in (PACKAGE / "workflows").rglob("*.py")
             for target, line in imported(path, with_annotations=True)
             if not target.startswith(WORKFLOW_GROUND)]  # fmt: skip
    assert found == []


def test_files_never_import_the_context_engine() -> None:
    found = [f"{path.relative_to(REPO)}:{line} imports {target}" for path in (PACKAGE / "files").rglob("*.py")
             for target, line in imported(path) if target.startswith("agent_runtime.context")]  # fmt: skip
    assert found == []


def test_the_check_sees_an_upward_import(tmp_path: Path) -> None:
    """The checker itself: a chat module importing the service (even lazily) would be caught."""
    probe = tmp_path / "probe.py"
    probe.write_text("def later():\n    from ..service.worker import Worker\n    from .. import service\n")
    [(target, _), (package, _)] = imported(probe, "agent_runtime.chat.probe")
    assert (target, package) == ("agent_runtime.service.worker.Worker", "agent_runtime.service")
    assert (floor(target) or 0) > (floor("agent_runtime.chat.probe") or 0)
    assert (floor(package) or 0) > (floor("agent_runtime.chat.probe") or 0)


def test_what_goes_out_takes_nothing_from_what_comes_in() -> None:
    """``chat`` answers an event (``inbound``, the ground's): nothing of ``triggers`` (reply errors, button ids,
    Atlassian documents, the store) is chat's or a toolset's to borrow."""
    found = [
        f"{path.relative_to(REPO)}:{line} imports {target}"
        for package in ("chat", "toolsets")
        for path in (PACKAGE / package).rglob("*.py")
        for target, line in imported(path, with_annotations=True)
        if target.startswith("agent_runtime.triggers")
    ]
    assert found == []
