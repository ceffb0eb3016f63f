"""The layer's requirements.txt is generated from pyproject.toml (`make lock`) and must not go stale."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
LOCK = REPO / "layers" / "runtime" / "requirements.txt"
DOCUMENTS_LOCK = REPO / "layers" / "documents" / "requirements.txt"


def _pins(lock: Path = LOCK, marker: str = "agent-runtime (pyproject.toml)") -> tuple[dict[str, str], set[str]]:
    pins: dict[str, str] = {}
    direct: set[str] = set()
    current = ""
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = re.match(r"^([A-Za-z0-9_.\-]+)==(\S+)", line)
        if match:
            current = canonicalize_name(match.group(1))
            pins[current] = match.group(2)
        elif marker in line:
            direct.add(current)
    return pins, direct


def test_requirements_lock_matches_pyproject() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    requirements = {canonicalize_name(Requirement(d).name): Requirement(d) for d in declared}
    pins, direct = _pins()
    hint = "layers/runtime/requirements.txt is stale: run `make lock`"
    assert direct == set(requirements), hint
    for name, requirement in requirements.items():
        assert requirement.specifier.contains(pins[name], prereleases=True), f"{hint} ({name}=={pins[name]})"


def test_layer_sources_hold_only_the_package_requirements_and_build_makefile() -> None:
    # *.egg-info is the editable install's metadata: gitignored, never shipped.
    entries = {
        p.name for p in (REPO / "layers" / "runtime").iterdir() if not p.name.endswith((".egg-info", "__pycache__"))
    }
    assert entries <= {"agent_runtime", "requirements.txt", "Makefile"}
    assert {p.name for p in (REPO / "layers" / "documents").iterdir()} == {"requirements.txt", "Makefile"}


def test_no_sys_path_hacks() -> None:
    patterns = ("sys.path." + "insert", "sys.path." + "append")  # split so this file does not match itself
    offenders = [
        str(p.relative_to(REPO))
        for folder in ("tests", "layers", "functions")
        if (REPO / folder).exists()
        for p in (REPO / folder).rglob("*.py")
        if any(pattern in p.read_text(encoding="utf-8") for pattern in patterns)
    ]
    assert offenders == []


def test_documents_layer_lock_matches_the_extra() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {
        canonicalize_name(Requirement(d).name): Requirement(d) for d in project["optional-dependencies"]["documents"]
    }
    pins, _ = _pins(DOCUMENTS_LOCK)
    hint = "layers/documents/requirements.txt is stale: run `make lock`"
    assert set(declared) <= set(pins), hint
    for name, requirement in declared.items():
        assert requirement.specifier.contains(pins[name], prereleases=True), hint


def test_package_names_are_lazy_and_complete() -> None:
    import subprocess
    import sys

    import agent_runtime

    assert set(agent_runtime.__all__) - {"__version__"} == set(agent_runtime._EXPORTS)
    assert all(getattr(agent_runtime, name) is not None for name in agent_runtime._EXPORTS)
    # The extraction path (and the webhook Lambda later) must not pay for the openai client at import.
    probe = "import sys, agent_runtime.extract; print('openai' in sys.modules, 'tiktoken' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "False"]
