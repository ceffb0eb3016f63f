"""The sizes the house keeps (issue 49), held by a test so they stay met: an orchestrator that only sequences stays
short, and no function or module grows past what a reader takes in at once. The formatter decides the layout (no
`# fmt: skip` but for tables, each saying so): a line count it did not make would measure nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "layers" / "runtime" / "agent_runtime"
MAX_FUNCTION_LINES = 50
MAX_MODULE_LINES = 400  # non-blank
LIMITS = {  # an orchestrator and its parts: lines, blank ones included, as the formatter lays them out
    "service/worker.py:Worker": 120,
    "loop/agent.py": 350,
}
MAX_HANDLER_LINES = 150  # each service/on_*.py: one kind of queue message


def modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def lines_of(node: ast.AST) -> int:
    return int(node.end_lineno or 0) - int(getattr(node, "lineno", 0)) + 1  # type: ignore[attr-defined]


def test_no_function_is_over_fifty_lines() -> None:
    long = []
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and lines_of(node) > MAX_FUNCTION_LINES:
                long.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}: {lines_of(node)} lines")
    assert long == []


def test_no_module_is_over_four_hundred_lines() -> None:
    counts = {path: sum(1 for line in path.read_text().splitlines() if line.strip()) for path in modules()}
    long = [f"{path.relative_to(PACKAGE)}: {count} non-blank lines" for path, count in counts.items()]
    assert [line for line, count in zip(long, counts.values(), strict=True) if count > MAX_MODULE_LINES] == []


@pytest.mark.parametrize(("where", "limit"), LIMITS.items())
def test_the_orchestrators_stay_short(where: str, limit: int) -> None:
    file, _, name = where.partition(":")
    tree = ast.parse((PACKAGE / file).read_text())
    nodes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name] if name else [tree]
    assert nodes, f"{where} is gone: update LIMITS"
    size = lines_of(nodes[0]) if name else len((PACKAGE / file).read_text().splitlines())
    assert size <= limit, f"{where}: {size} lines (at most {limit})"


def test_each_message_kinds_handler_module_is_short() -> None:
    handlers = sorted((PACKAGE / "service").glob("on_*.py"))
    assert len(handlers) >= 7  # one per kind of queue message (test_queued checks each kind has one)
    long = [f"{path.name}: {n}" for path in handlers if (n := len(path.read_text().splitlines())) > MAX_HANDLER_LINES]
    assert long == []


def test_the_formatter_decides_but_for_tables() -> None:
    """A `# fmt: skip` keeps a table's columns; anywhere else the formatter's layout is the layout. Each skip in the
    package says it is a table."""
    found = []
    for path in modules():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "# fmt: skip" in line and "table" not in line.split("# fmt: skip", 1)[1]:
                found.append(f"{path.relative_to(PACKAGE)}:{number}")
    assert found == []
