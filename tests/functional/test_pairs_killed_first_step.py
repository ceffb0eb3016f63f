"""A CLI turn killed in its first model call (SIGKILL: no handler runs) x its thread's next turn. Nothing was
checkpointed before a step ended, so `run -t` went on from the thread's last saved turn and the person's message
was lost. Invariant: the message survives the kill: the thread's next turn sees it, before its own, and the
killed run lists as interrupted.

Real paths: the CLI in a subprocess, the scripted model over HTTP (the first call is held until the kill)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from agent_runtime.testing import ScriptedRequest, ScriptedServer, reply
from agent_runtime.testing.steps import Reply

from tests.cli_support import REPO

FLOW = """\
name: notes
description: Takes notes.
prompt: You take notes.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 512}
"""
FIRST = "Remember: the release is on Thursday — ask Émile before 10:00"


def test_a_turn_killed_in_its_first_model_call_keeps_its_message_for_the_next_turn(tmp_path: Path) -> None:
    held, release = threading.Event(), threading.Event()
    seen: list[ScriptedRequest] = []

    def answer(request: ScriptedRequest) -> Reply:
        seen.append(request)
        if request.last_user_text() == FIRST:
            held.set()
            release.wait(60)  # the model is still thinking when the process dies
        return reply("Noted.")

    (tmp_path / "notes.yaml").write_text(FLOW)
    with ScriptedServer([], intercept=answer) as model:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
        env |= {"OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test", "AGENT_SANDBOX": "off",
                "AGENT_STATE_DIR": str(tmp_path / "state")}  # fmt: skip
        base = [sys.executable, "-m", "agent_runtime", "run", str(tmp_path / "notes.yaml"), "-q", "-t", "T-notes"]
        pipe = subprocess.PIPE
        first = subprocess.Popen([*base, "-m", FIRST], env=env, cwd=REPO, stdout=pipe, stderr=pipe)
        try:
            deadline = time.monotonic() + 60
            while not held.is_set():
                assert time.monotonic() < deadline and first.poll() is None, first.communicate()
                time.sleep(0.02)
            first.send_signal(signal.SIGKILL)
            first.communicate(timeout=30)
        finally:
            release.set()
        second = subprocess.run([*base, "-m", "and the notes?"], env=env, cwd=REPO, capture_output=True, text=True,
                                timeout=60)  # fmt: skip
    assert second.returncode == 0, second.stderr
    users = [m["content"] for m in seen[-1].messages if m["role"] == "user"]
    assert users == [FIRST, "and the notes?"], users
    listed = subprocess.run([sys.executable, "-m", "agent_runtime", "runs", "list", "--json"], env=env, cwd=REPO,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    statuses = sorted(row["status"] for row in json.loads(listed.stdout))
    assert statuses == ["completed", "interrupted"], statuses
