"""docs/architecture.md names every package and every top-level module of agent_runtime: a module added without
its line in the map fails here, so the map stays drawn from the code."""

from __future__ import annotations

from tests.conftest import REPO

PACKAGE = REPO / "layers" / "runtime" / "agent_runtime"


def test_the_architecture_names_every_package_and_module() -> None:
    text = (REPO / "docs" / "architecture.md").read_text()
    packages = [p.name + "/" for p in PACKAGE.iterdir() if p.is_dir() and (p / "__init__.py").exists()]
    modules = [p.name for p in PACKAGE.glob("*.py") if p.name not in ("__init__.py", "__main__.py", "py.typed")]
    assert [name for name in [*packages, *modules] if name not in text] == []
