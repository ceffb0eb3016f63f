"""layers/bytecode.py, which finishes a built layer: unused botocore models out, unchecked-hash bytecode in."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

SCRIPT = REPO / "layers" / "bytecode.py"


def layer(tmp_path: Path) -> Path:
    data = tmp_path / "botocore" / "data"
    for service, prefix in (("s3", "s3"), ("sqs", "sqs"), ("ec2", "ec2"), ("cloudwatch", "monitoring")):
        (data / service / "2020-01-01").mkdir(parents=True)
        model = {"metadata": {"endpointPrefix": prefix}}
        (data / service / "2020-01-01" / "service-2.json.gz").write_bytes(gzip.compress(json.dumps(model).encode()))
    services = {name: {"endpoints": {}} for name in ("s3", "sqs", "ec2", "monitoring")}
    partitions = [{"partition": p, "regions": {"r": {}}, "services": services} for p in ("aws", "aws-cn")]
    (data / "endpoints.json").write_text(json.dumps({"partitions": partitions, "version": 3}))
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("VALUE = 42\n")
    return tmp_path


HERE = "{}.{}".format(*sys.version_info[:2])


def run(*args: str, version: str = HERE) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "LAMBDA_PYTHON"} | {"LAMBDA_VERSION": version}
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env)


def test_keeps_the_listed_models_and_the_shared_files_and_compiles_unchecked_hash(tmp_path: Path) -> None:
    root = layer(tmp_path)
    done = run(str(root), "--botocore-services", "s3 cloudwatch")
    assert done.returncode == 0, done.stderr
    data = root / "botocore" / "data"
    assert sorted(p.name for p in data.iterdir()) == ["cloudwatch", "endpoints.json", "s3"]
    endpoints = json.loads((data / "endpoints.json").read_text())
    assert [sorted(p["services"]) for p in endpoints["partitions"]] == [["monitoring", "s3"]] * 2  # by prefix
    assert endpoints["partitions"][0]["regions"] == {"r": {}} and endpoints["version"] == 3
    pyc = root / "pkg" / "__pycache__" / f"mod.{sys.implementation.cache_tag}.pyc"
    assert pyc.read_bytes()[4] == 1  # PEP 552 flags: hash-based, unchecked


def test_bytecode_is_written_by_an_interpreter_of_lambdas_version_whichever_python_runs_the_script(
    tmp_path: Path,
) -> None:
    other = "3.11" if HERE != "3.11" else "3.13"
    found = subprocess.run([str(REPO / "scripts" / "find-python"), other], capture_output=True, text=True)
    if found.returncode:
        pytest.skip(f"no Python {other} on this machine")
    root = layer(tmp_path)
    assert run(str(root), version=other).returncode == 0
    assert [p.name for p in (root / "pkg" / "__pycache__").iterdir()] == [f"mod.cpython-{other.replace('.', '')}.pyc"]


def test_without_an_interpreter_of_lambdas_version_no_bytecode_is_shipped(tmp_path: Path) -> None:
    root = layer(tmp_path)
    done = run(str(root), version="3.99")
    assert done.returncode == 0 and "no Python 3.99 (Lambda's) found; no bytecode shipped" in done.stdout
    assert not (root / "pkg" / "__pycache__").exists()


def test_all_keeps_every_model(tmp_path: Path) -> None:
    root = layer(tmp_path)
    assert run(str(root), "--botocore-services", "all").returncode == 0
    assert (root / "botocore" / "data" / "ec2").is_dir()
    assert "ec2" in (root / "botocore" / "data" / "endpoints.json").read_text()


def test_a_misspelt_service_fails_the_build_and_removes_nothing(tmp_path: Path) -> None:
    root = layer(tmp_path)
    done = run(str(root), "--botocore-services", "s3 sqss")
    assert done.returncode != 0 and "no botocore model for ['sqss']" in done.stderr
    assert (root / "botocore" / "data" / "ec2").is_dir()
    assert "ec2" in (root / "botocore" / "data" / "endpoints.json").read_text()
