"""The `sam build` output and Lambda's interpreter (an importer is skipped without them), each function's layout."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.conftest import REPO
from tests.triggers_support import HANDLER_ENV

BUILD = REPO / ".aws-sam" / "build"

if not (BUILD / "template.yaml").is_file():
    if os.environ.get("AGENT_REQUIRE_BUILD"):
        raise RuntimeError("no .aws-sam/build: run `make build`")
    pytest.skip("no .aws-sam/build (run `make build`)", allow_module_level=True)


class _Loader(yaml.SafeLoader):
    """CloudFormation tags: ``!Ref X`` becomes ``{"Ref": "X"}``; the others are not needed here."""


_Loader.add_constructor("!Ref", lambda loader, node: {"Ref": loader.construct_scalar(node)})
_Loader.add_multi_constructor("!", lambda loader, suffix, node: None)


def lambda_runtime() -> str:
    """The Python functions' runtime in the built template (``python3.13``)."""
    template = yaml.load((BUILD / "template.yaml").read_text(), Loader=_Loader)
    runtimes = {r["Properties"].get("Runtime") for r in template["Resources"].values() if "Properties" in r}
    (runtime,) = {r for r in runtimes if r and r.startswith("python")}
    return str(runtime)


def find_python(version: str) -> str | None:
    """An interpreter of that version, found as the Makefile finds them (scripts/find-python)."""
    found = subprocess.run([str(REPO / "scripts" / "find-python"), version], capture_output=True, text=True)
    return found.stdout.strip() or None


LAMBDA_VERSION = lambda_runtime().removeprefix("python")
LAMBDA_PYTHON = os.environ.get("LAMBDA_PYTHON") or find_python(LAMBDA_VERSION)
if not LAMBDA_PYTHON:
    if os.environ.get("AGENT_REQUIRE_LAMBDA_PYTHON"):
        raise RuntimeError(f"no Python {LAMBDA_VERSION} to check the build with (the functions' runtime)")
    pytest.skip(f"no Python {LAMBDA_VERSION}: the build is checked with Lambda's interpreter", allow_module_level=True)


def functions() -> dict[str, list[str]]:
    """Each built function and the logical ids of its layers."""
    template = yaml.load((BUILD / "template.yaml").read_text(), Loader=_Loader)
    return {
        name: [layer["Ref"] for layer in resource["Properties"].get("Layers", [])]
        for name, resource in template["Resources"].items()
        if resource["Type"] == "AWS::Serverless::Function"
    }


def layout(function: str, build: Path = BUILD) -> list[str]:
    """The path Lambda gives a function: its folder, then its layers' ``python`` folders (those that have one)."""
    layers = [build / layer / "python" for layer in functions()[function]]
    return [str(build / function), *(str(folder) for folder in layers if folder.is_dir())]


def import_ms(build: Path, function: str, code: str, python: str = str(LAMBDA_PYTHON)) -> float:
    """The CPU time of one cold import in a fresh interpreter (Lambda's version unless ``python`` says), laid out
    as Lambda runs it: only the built function and layers on the path, no site-packages, read-only (nothing
    written back). The interpreter's own start is left out, as Lambda's runtime has started before init."""
    paths = layout(function, build) if function else [str(build / "RuntimeLayer" / "python")]
    script = f"import sys, time; sys.path[:0] = {paths!r}; t = time.process_time(); {code}; "
    script += "print((time.process_time() - t) * 1000)"
    env = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1", **HANDLER_ENV}
    env["AGENT_WORKFLOWS_DIR"] = str(build / "ContentLayer" / "workflows")
    env["AGENT_SKILLS_DIR"] = str(build / "ContentLayer" / "skills")
    cwd = build / (function or "RuntimeLayer")
    out = subprocess.run([python, "-S", "-c", script], cwd=cwd, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return float(out.stdout.strip().splitlines()[-1])
