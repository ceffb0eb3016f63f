"""layers/bytecode.py, which finishes a built layer: unused botocore models out, unchecked-hash bytecode in."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

SCRIPT = REPO / "layers" / "bytecode.py"


def layer(tmp_path: Path) -> Path:
    data = tmp_path / "botocore" / "data"
    for service in ("s3", "sqs", "ec2"):
        (data / service / "2020-01-01").mkdir(parents=True)
        (data / service / "2020-01-01" / "service-2.json").write_text("{}")
    (data / "endpoints.json").write_text("{}")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("VALUE = 42\n")
    return tmp_path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True)


def test_keeps_the_listed_models_and_the_shared_files_and_compiles_unchecked_hash(tmp_path: Path) -> None:
    root = layer(tmp_path)
    done = run(str(root), "--botocore-services", "s3 sqs")
    assert done.returncode == 0, done.stderr
    data = root / "botocore" / "data"
    assert sorted(p.name for p in data.iterdir()) == ["endpoints.json", "s3", "sqs"]
    pyc = root / "pkg" / "__pycache__" / f"mod.{sys.implementation.cache_tag}.pyc"
    if sys.version_info[:2] == (3, 11):
        assert pyc.read_bytes()[4] == 1  # PEP 552 flags: hash-based, unchecked
    else:
        assert not pyc.exists() and "no bytecode shipped" in done.stdout


def test_all_keeps_every_model(tmp_path: Path) -> None:
    root = layer(tmp_path)
    assert run(str(root), "--botocore-services", "all").returncode == 0
    assert (root / "botocore" / "data" / "ec2").is_dir()


def test_a_misspelt_service_fails_the_build_and_removes_nothing(tmp_path: Path) -> None:
    root = layer(tmp_path)
    done = run(str(root), "--botocore-services", "s3 sqss")
    assert done.returncode != 0 and "no botocore model for ['sqss']" in done.stderr
    assert (root / "botocore" / "data" / "ec2").is_dir()
