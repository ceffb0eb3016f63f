"""serve says at start what `workflows validate` warns of for its workflows' triggers (was: without
SLACK_BOT_TOKEN a signed mention ran, logged "answered" and its answer went nowhere, and a signed webhook whose
secret was unset was refused 401 at each delivery, serve having said nothing at start).

The real CLI in subprocesses: serve's lines at start against validate's for the same machine, whatever is set."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

FLOWS = {
    "helper": "name: helper\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\n"
    "triggers: {slack: {channels: [C0HELP]}}\n",
    "prs": "name: prs\ndescription: d\nprompt: p\nmodel: {name: gpt-4o, context_window: 8000}\n"
    "triggers: {webhook: {secret: github_webhook_secret, signature: github, events: [pull_request]}}\n",
}
SECRETS = ("SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "GITHUB_WEBHOOK_SECRET")


def _env(tmp_path: Path, present: tuple[str, ...]) -> dict[str, str]:
    (tmp_path / "workflows").mkdir(exist_ok=True)
    for name, text in FLOWS.items():
        (tmp_path / "workflows" / f"{name}.yaml").write_text(text)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SLACK_", "JIRA_", "GITHUB_"))}
    env |= {"AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_WORKFLOWS_DIR": str(tmp_path / "workflows")}
    return env | {key: "set-" + key.lower() for key in present}


def _serve_says(env: dict[str, str]) -> str:
    """What serve --no-playground says until it serves (then Ctrl-C)."""
    argv = [sys.executable, "-m", "agent_runtime", "serve", "--no-playground", "--port", "0"]
    process = subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=REPO)
    assert process.stderr is not None
    said = ""
    try:
        while "Ctrl-C stops" not in said and process.poll() is None:
            said += process.stderr.readline()
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(30)
    assert "Ctrl-C stops" in said, said
    return said


def _warnings(text: str) -> set[str]:
    """Each warning of a trigger's, from its key on (validate puts the file first, serve its own name)."""
    lines = [line for line in text.splitlines() if "warning: " in line and "triggers." in line]
    return {line[line.index("triggers.") :] for line in lines}


@pytest.mark.parametrize("present", [("SLACK_SIGNING_SECRET",), SECRETS])
def test_serve_warns_at_start_of_what_validate_warns_of(tmp_path: Path, present: tuple[str, ...]) -> None:
    env = _env(tmp_path, present)
    served = _serve_says(env)
    validated = subprocess.run([sys.executable, "-m", "agent_runtime", "workflows", "validate"], env=env,
                               capture_output=True, text=True, timeout=90, cwd=REPO)  # fmt: skip
    said = _warnings(served)
    assert said == _warnings(validated.stderr), (served, validated.stderr)
    if present == SECRETS:
        assert said == set() and "warning" not in served
        return
    assert any("SLACK_BOT_TOKEN is not set: its answers go nowhere" in line for line in said), served
    assert any("GITHUB_WEBHOOK_SECRET is not set: every POST /hooks/prs is refused" in line for line in said), served
    assert all(f"{key} is not set" not in served for key in present)
