"""A newcomer's fresh clone: the environment with nothing configured, the CLI run in it, and the README's first
workflow written where the README puts it."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

CONFIGURED = ("SLACK_", "JIRA_", "OPENAI_", "AGENT_", "API_KEY", "RUN_PAGE_KEY", "GITHUB_WEBHOOK_SECRET")


def bare_env(**extra: str) -> dict[str, str]:
    """The environment of a fresh clone: none of the runtime's variables, no model endpoint, no tokens."""
    return {k: v for k, v in os.environ.items() if not k.startswith(CONFIGURED)} | extra


def cli(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_runtime", *args], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=90)  # fmt: skip


def readme_first_workflow(tree: Path) -> list[list[str]]:
    """The section's workflow file and tool module written where the README puts them; its commands, as argv."""
    readme = (REPO / "README.md").read_text()
    section = readme[readme.index("## A first workflow") : readme.index("## Measure a change")]
    (tree / "workflows").mkdir()
    (tree / "tools").mkdir()
    (tree / "workflows" / "incident-helper.yaml").write_text(re.search(r"```yaml\n(.*?)```", section, re.S)[1])  # type: ignore[index]
    (tree / "tools" / "ops_tools.py").write_text(re.search(r"```python\n(.*?)```", section, re.S)[1])  # type: ignore[index]
    commands = re.search(r"```sh\n(.*?)```", section, re.S)[1].replace("\\\n", " ")  # type: ignore[index]
    return [shlex.split(line, comments=True)[1:] for line in commands.splitlines() if line.strip()]
