"""``run -q`` prints the answer and errors only: a tool the run goes without (a built-in lacking its credentials
on a machine with nothing configured) is not said on stderr, where ``workflows validate`` says it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.newcomer_support import bare_env, cli

DEMO_NOTICE = "agent-runtime: OPENAI_API_KEY and OPENAI_BASE_URL are unset: using the embedded demo model at "
# The shipped workflows declaring built-in tools: on a bare machine each run goes without them.
WITH_BUILTINS = sorted(p.stem for p in (REPO / "workflows").glob("*.yaml") if "builtin:" in p.read_text())


def test_some_shipped_workflow_declares_builtins() -> None:
    assert WITH_BUILTINS  # else the test below checks nothing


@pytest.mark.parametrize("workflow", WITH_BUILTINS)
def test_quiet_says_nothing_but_the_demo_models_notice(workflow: str, tmp_path: Path) -> None:
    env = bare_env(AGENT_STATE_DIR=str(tmp_path / "state"))
    checked = cli("workflows", "validate", workflow, cwd=REPO, env=env)
    assert "warning: tools.builtin" in checked.stderr, checked.stderr  # what the run goes without, said here

    ran = cli("run", workflow, "-q", "-m", "hello", cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip()
    said = ran.stderr.splitlines()  # no warning, no trace, no where-stored lines
    assert len(said) == 1 and said[0].startswith(DEMO_NOTICE), ran.stderr
