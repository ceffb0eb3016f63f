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
