"""The package reads top-down: ``service`` (worker, serve) over ``runtime`` over ``toolsets`` over ``chat`` (how
answers go out) over ``triggers`` (what comes in) over ``workflows``, which holds each feature's settings (the
section parsers its schema collects): a feature imports its settings from the workflow, never the workflow a
feature, so the workflow sits below all it configures. And ``files`` never imports ``context`` (the context
engine uses files, not the other way round). Checked over every import, lazy ones included; only ``if
TYPE_CHECKING:`` blocks are left out (annotations, not dependencies)."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

PACKAGE = REPO / "layers" / "runtime" / "agent_runtime"
FLOORS = {"cli": 7, "evals": 6, "service": 6, "runtime": 5, "toolsets": 4, "chat": 3, "triggers": 2, "sources": 2,
          "workflows": 1}  # fmt: skip


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def floor(module: str) -> int | None:
    parts = module.split(".")
    return FLOORS.get(parts[1]) if len(parts) >= 2 else None


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
            if target.startswith("agent_runtime"):
                found.append((target, node.lineno))

        def visit_Import(self, node: ast.Import) -> None:
            found.extend((alias.name, node.lineno) for alias in node.names if alias.name.startswith("agent_runtime"))

    Visitor().visit(ast.parse(path.read_text()))
    return found


def test_no_package_imports_one_above_it() -> None:
    upward = []
    for path in PACKAGE.rglob("*.py"):
        own = floor(module_name(path))
        for target, line in imported(path) if own is not None else []:
            theirs = floor(target)
            if theirs is not None and theirs > own:
                upward.append(f"{path.relative_to(REPO)}:{line} imports {target}")
    assert upward == []


# What a workflow's definition may import: the parsing helpers and the leaf values every floor shares
WORKFLOW_GROUND = (
    "agent_runtime.sections",
    "agent_runtime.errors",
    "agent_runtime.models.prices",
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
    probe.write_text("def later():\n    from ..service.worker import Worker\n")
    [(target, _)] = imported(probe, "agent_runtime.chat.probe")
    assert target == "agent_runtime.service.worker"
    assert (floor(target) or 0) > (floor("agent_runtime.chat.probe") or 0)


def test_what_goes_out_takes_from_what_comes_in_only_the_event() -> None:
    """``chat`` answers an event, so it reads ``triggers.event``; nothing else of ``triggers`` (reply errors, button
    ids, Atlassian documents, the store) is chat's or a toolset's to borrow."""
    found = [f"{path.relative_to(REPO)}:{line} imports {target}"
             for package in ("chat", "toolsets") for path in (PACKAGE / package).rglob("*.py")
             for target, line in imported(path, with_annotations=True)
             if target.startswith("agent_runtime.triggers") and target != "agent_runtime.triggers.event"]  # fmt: skip
    assert found == []
