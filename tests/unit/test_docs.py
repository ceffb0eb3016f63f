"""The documentation keeps up with the code: every environment variable the runtime reads is in
docs/configuration.md, and every relative link of the README and docs/ leads to a file (and a heading) that exists."""

from __future__ import annotations

import re
from pathlib import Path

from agent_runtime.triggers.config import SECRET_KEYS

from tests.conftest import REPO

PACKAGE = REPO / "layers" / "runtime" / "agent_runtime"
ENV_NAME = re.compile(r"\"((?:AGENT|SLACK|JIRA|OTEL|OPENAI)_[A-Z0-9_]+)\"")
LINK = re.compile(r"\]\(([^)\s]+)\)")


def read_names() -> set[str]:
    names = {m for path in PACKAGE.rglob("*.py") for m in ENV_NAME.findall(path.read_text())}
    sandbox = REPO / "functions" / "sandbox"
    for path in [*sandbox.glob("*.mjs"), *sandbox.glob("lib/*.mjs")]:
        names |= set(re.findall(r"process\.env\.([A-Z][A-Z0-9_]+)", path.read_text()))
    return names | {key.upper() for key in SECRET_KEYS} | {"OPENAI_BASE_URL"}


def test_every_environment_variable_read_is_documented() -> None:
    documented = set(re.findall(r"`([A-Z][A-Z0-9_]+)(?:=[^`]*)?`", (REPO / "docs" / "configuration.md").read_text()))
    names = read_names()
    assert len(names) > 30  # the scan still finds them
    assert names <= documented, f"add to docs/configuration.md: {sorted(names - documented)}"


def anchors(text: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens."""
    headings = re.findall(r"^#{1,6} (.+)$", re.sub(r"```.*?```", "", text, flags=re.S), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_every_relative_link_leads_somewhere() -> None:
    pages = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            where = (page.parent / path).resolve() if path else page
            if not where.exists() or (anchor and where.suffix == ".md" and anchor not in anchors(where.read_text())):
                broken.append(f"{page.relative_to(REPO)}: {target}")
    assert not broken, broken


def test_the_readmes_first_workflow_is_valid(tmp_path: Path) -> None:
    from agent_runtime.workflows import load_workflow

    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## A first workflow") :]
    text = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]
    (tmp_path / "incident-helper.yaml").write_text(text)
    workflow = load_workflow("incident-helper", tmp_path, skill_names={"slack-formatting"})
    assert workflow.triggers.slack is not None and len(workflow.triggers.slack.suggested_prompts) == 2
    assert workflow.sandbox.enabled and workflow.tools.approvers == ("U0123LEAD",)
