"""The tests' own house (issue 49): no module under tests/ imports a test module — shared fixtures live in a
conftest.py, shared helpers and constants in support modules — so no fixture is imported and shadowed by its own
parameter (and silenced for ruff's F811). Checked over every import, lazy ones included, in any of Python's forms."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

TESTS = REPO / "tests"
SILENCED = re.compile(r"#\s*noqa:[^\n]*\bF811\b")  # a name redefined: a fixture imported, then its parameter


def is_test_module(dotted: str) -> bool:
    return dotted.split(".")[-1].startswith("test_")


def imported_test_modules(source: str, module: str) -> list[str]:
    """The test modules ``source`` imports (``module`` is its own dotted name, to resolve relative imports)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if is_test_module(alias.name)]
        elif isinstance(node, ast.ImportFrom):
            package = module.split(".")[: -node.level] if node.level else []
            base = ".".join([*package, *([node.module] if node.module else [])])
            if is_test_module(base):
                found.append(base)
            found += [f"{base}.{alias.name}" for alias in node.names if is_test_module(alias.name)]
    return found


def dotted(path: Path) -> str:
    return ".".join(path.relative_to(REPO).with_suffix("").parts)


FORMS = {
    "from a test module": "from tests.functional.test_cli import run_cli",
    "a test module": "import tests.unit.test_extract",
    "a test module from its package": "from tests.functional import test_cli",
    "relative, from it": "from .test_cli import run_cli",
    "relative, it": "from . import test_cli",
    "lazy, in a function": "def f():\n    from tests.bench.test_bench_triggers import import_ms",
}


@pytest.mark.parametrize("line", FORMS.values(), ids=FORMS.keys())
def test_every_form_of_importing_a_test_module_is_found(line: str) -> None:
    assert imported_test_modules(line, "tests.functional.test_x")


def test_support_modules_and_fixtures_are_not_test_modules() -> None:
    source = "from tests.conftest import REPO\nfrom tests.worker_support import System\nimport tests.cli_support\n"
    assert imported_test_modules(source, "tests.functional.test_x") == []


def test_no_module_under_tests_imports_a_test_module() -> None:
    modules = sorted(TESTS.rglob("*.py"))
    assert len([m for m in modules if m.name.startswith("test_")]) > 100  # the walk found the suite
    offenders = {dotted(m): imported_test_modules(m.read_text(), dotted(m)) for m in modules}
    assert {name: found for name, found in offenders.items() if found} == {}


def test_no_fixture_is_imported_and_shadowed() -> None:
    shadowed = [f"{m.relative_to(REPO)}:{n}" for m in sorted(TESTS.rglob("*.py"))
                for n, line in enumerate(m.read_text().splitlines(), 1) if SILENCED.search(line)]  # fmt: skip
    assert shadowed == []
