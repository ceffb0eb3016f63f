"""The CLI's promise of "never a traceback" (issue 41, point 9): a closed pipe ends quietly, a connection error
names the URL and what to check, `make slack-manifest` without AWS says how to go on and shows the SAM CLI's
own words."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_", "AWS_"))}
    return clean | {"AGENT_STATE_DIR": str(tmp_path / "state")} | extra


def test_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    for command in (["workflows", "list"], ["runs", "list"], ["--help"]):
        process = subprocess.Popen([sys.executable, "-m", "agent_runtime", *command], stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=env(tmp_path), cwd=REPO)  # fmt: skip
        assert process.stdout is not None and process.stderr is not None
        process.stdout.close()  # `| head -0`: the reader is gone before anything is written
        said = process.stderr.read().decode()
        assert process.wait() == 0 and "Traceback" not in said and "BrokenPipeError" not in said, said


def test_a_connection_error_names_the_url(tmp_path: Path) -> None:
    url = "http://127.0.0.1:9/v1"  # the discard port: nothing listens
    endpoint = env(tmp_path, OPENAI_BASE_URL=url, OPENAI_API_KEY="x", AGENT_MODEL_MAX_ATTEMPTS="1")
    result = subprocess.run([sys.executable, "-m", "agent_runtime", "run", "document-feedback", "--message", "hi",
                             "-q"], capture_output=True, text=True, cwd=REPO, timeout=120, env=endpoint)  # fmt: skip
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert f"cannot connect to {url}" in result.stderr and "check OPENAI_BASE_URL" in result.stderr


def test_slack_manifest_without_aws_says_how_to_go_on(tmp_path: Path) -> None:
    fake_sam = tmp_path / "bin" / "sam"
    fake_sam.parent.mkdir()
    fake_sam.write_text("#!/bin/sh\necho 'Error: Unable to locate credentials' >&2\nexit 1\n")
    fake_sam.chmod(0o755)
    path = f"{fake_sam.parent}:{os.environ['PATH']}"
    script = REPO / "scripts" / "slack-manifest"
    copy = tmp_path / "repo" / "scripts" / "slack-manifest"  # a checkout without .venv-sam: `sam` from the PATH
    copy.parent.mkdir(parents=True)
    copy.write_text(script.read_text())
    (tmp_path / "repo" / "slack").mkdir()
    (tmp_path / "repo" / "slack" / "manifest.yaml").write_text((REPO / "slack" / "manifest.yaml").read_text())
    failed = subprocess.run([sys.executable, str(copy)], capture_output=True, text=True, env=env(tmp_path, PATH=path))
    assert failed.returncode == 1 and "Traceback" not in failed.stderr
    assert "Unable to locate credentials" in failed.stderr and "OUTPUTS=outputs.json" in failed.stderr
    outputs = tmp_path / "outputs.json"
    keys = {"SlackEventsUrl", "SlackInteractivityUrl", "SlackOptionsUrl"}
    manifest = (REPO / "slack" / "manifest.yaml").read_text()
    names = set(re.findall(r"\$\{(\w+)\}", manifest)) | keys
    outputs.write_text(json.dumps([{"OutputKey": k, "OutputValue": f"https://example.test/{k}"} for k in names]))
    done = subprocess.run([sys.executable, str(copy), str(outputs)], capture_output=True, text=True)
    assert done.returncode == 0 and "https://example.test/" in done.stdout
    assert not re.search(r"\$\{\w+\}", done.stdout)
    broken = subprocess.run([sys.executable, str(copy), str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert broken.returncode == 1 and "cannot read" in broken.stderr and "Traceback" not in broken.stderr


def test_an_unusable_state_dir_is_one_line(tmp_path: Path) -> None:
    """A file as AGENT_STATE_DIR, or a path below one: every command that opens the local store says so in one
    line, exit 2 (it was three chained tracebacks from `run`, and "no runs here" from `runs list`)."""
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    commands = (["run", "document-feedback", "-m", "hi", "-q"], ["runs", "list"], ["runs", "show", "run-1"])
    for state in (a_file, a_file / "below"):
        for command in commands:
            where = env(tmp_path, AGENT_STATE_DIR=str(state))
            result = subprocess.run([sys.executable, "-m", "agent_runtime", *command], capture_output=True,
                                    text=True, cwd=REPO, timeout=120, env=where)  # fmt: skip
            assert result.returncode == 2 and "Traceback" not in result.stderr, (command, result.stderr)
            assert result.stderr.count("\n") == 1 and f"AGENT_STATE_DIR={state}: not a directory" in result.stderr
    assert a_file.read_text() == ""  # nothing written over it
