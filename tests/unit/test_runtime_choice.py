"""The functions' Lambda runtime: python3.13 with SnapStart in template.yaml; `make build LAMBDA_RUNTIME=...` builds
another from a copy of the template (SnapStart off for python3.11, which it does not support)."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.conftest import REPO

TEMPLATE = (REPO / "template.yaml").read_text()


def runtimes(text: str) -> set[str]:
    found = re.findall(r"Runtime: (python3\.\d+)", text)
    found += [r for line in re.findall(r"CompatibleRuntimes: \[(.*)\]", text) for r in line.split(", ")]
    return set(found)


def snapstart_default(text: str) -> str:
    block = text[text.index("\n  SnapStart:\n") :]
    return re.search(r'Default: "(\w+)"', block).group(1)  # type: ignore[union-attr]


def test_the_template_runs_python313_with_snapstart_on_the_webhook_and_the_worker() -> None:
    assert runtimes(TEMPLATE) == {"python3.13"}
    assert snapstart_default(TEMPLATE) == "true"
    assert TEMPLATE.count("SnapStart: {ApplyOn: !If [") == 2
    assert "WebhookSnapStart: !And [!Condition SnapStartOn, !Not [!Condition HasWebhookProvisioned]]" in TEMPLATE


@pytest.mark.parametrize(("runtime", "snapstart"), [("python3.11", "false"), ("python3.12", "true")])
def test_another_runtime_is_built_from_a_copy_of_the_template(runtime: str, snapstart: str) -> None:
    target = f".aws-sam/template-{runtime}.yaml"
    subprocess.run(["make", "-s", "-B", target], cwd=REPO, check=True, capture_output=True)
    copy = (REPO / target).read_text()
    assert runtimes(copy) == {runtime}
    assert snapstart_default(copy) == snapstart
    assert copy.replace(runtime, "python3.13").replace('"false"  # SnapStart', '"true"  # SnapStart') == TEMPLATE


@pytest.mark.parametrize("layer", ["runtime", "documents"])
def test_plain_sam_build_gets_lambdas_python_version_without_make(layer: str) -> None:
    """`sam build` run as users type it (no top Makefile, so no LAMBDA_VERSION in the environment): was
    `--python-version` with no value (the runtime layer used the variable before defining it)."""
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("LAMBDA_")}
    target = f"build-{layer.capitalize()}Layer" if layer == "runtime" else "build-DocumentsLayer"
    dry = subprocess.run(["make", "-n", "-s", "-C", str(REPO / "layers" / layer), target, "ARTIFACTS_DIR=/tmp/x"],
                         capture_output=True, text=True, env=env, timeout=30)  # fmt: skip
    assert dry.returncode == 0, dry.stderr
    assert "--python-version 3.13 " in dry.stdout
