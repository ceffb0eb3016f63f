"""The agent-runtime command as a user runs it, in a subprocess from the repository (or a given folder)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "examples" / "documents"


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "agent_runtime", *args],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd,
        timeout=60,
    )
