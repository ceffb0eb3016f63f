"""A CLI run killed in a tool call: the workflow and tools the interrupted-run tests share, and the CLI they call."""

from __future__ import annotations

import subprocess
import sys

from tests.cli_support import REPO

TOOLS = '''
import os
import time
from pathlib import Path
from agent_runtime import tool


@tool
def check(service: str) -> str:
    """Check a service.

    Args:
        service: Its name.
    """
    gate = Path(os.environ["GATE"])
    if service == "held":  # the call the process dies in
        (gate / "started").touch()
        time.sleep(60)
    return f"{service}: up"
'''


FLOW = """\
name: checks
description: Checks services.
prompt: You check services.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 512}
tools: {python: [check_tools:check]}
"""


def cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_runtime", *args], env=env, cwd=REPO, capture_output=True,
                          text=True, timeout=60)  # fmt: skip
