"""``agent-runtime serve`` as a newcomer starts it (issue 54): on the repository's own workflows, with no key and no
Slack app, it prints the playground's address, and a mention posted there is answered in its thread by the
embedded model, streamed, within the demo's time — nothing but the package installed."""

from __future__ import annotations

import io
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.playground_support import act, page_token, until


def _not_int(text: str) -> bool:
    try:
        return not 0 <= int(text) <= 65535
    except ValueError:
        return True


@contextmanager
def serving(tmp_path: Path, *args: str, **env: str) -> Iterator[tuple[subprocess.Popen[str], str]]:
    """The CLI's ``serve`` in a process of its own; its first line of output that names an address."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SLACK_", "JIRA_"))}
    process = subprocess.Popen(
        [sys.executable, "-m", "agent_runtime", "serve", "--port", "0", *args],
        env=clean | {"AGENT_STATE_DIR": str(tmp_path / "state"), "AGENT_SANDBOX": "off"} | env,
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        cwd=REPO,
    )
    try:
        assert process.stderr is not None
        said = ""
        while "Ctrl-C stops" not in said and process.poll() is None:
            said += process.stderr.readline()
        yield process, said
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(15)


def test_serve_prints_the_playground_and_answers_a_mention_with_the_demo_model(tmp_path: Path) -> None:
    started = time.monotonic()
    with serving(tmp_path) as (_, said):
        [url] = re.findall(r"the playground: open (http://127\.0\.0\.1:\d+)/ in a browser", said)
        token = page_token(url)
        with urllib.request.urlopen(f"{url}/play/ui/state", timeout=10) as response:
            assert "embedded demo model" in json.loads(response.read())["model"]  # and the page says so
        sent = act(url, "message", {"channel": "C0GENERAL", "text": "@agent what is in the design?"}, token)
        assert sent["sent"]["answer"] == {"status": "queued", "workflow": "document-feedback"}

        def answer() -> dict[str, object] | None:
            with urllib.request.urlopen(f"{url}/play/ui/changes?after=-1", timeout=10) as response:
                records = json.loads(response.read())["records"]
            found = [r["body"] for r in records if r["kind"] == "message" and r["body"].get("_stream")]
            return next((m for m in found if m["_stream"]["state"] == "stopped" and m["thread_ts"] == sent["ts"]), None)

        streamed = until(answer, timeout=30, what="the streamed answer")
    assert "document-feedback workflow" in str(streamed["text"])
    assert time.monotonic() - started < 30  # `make demo`'s run takes seconds on this machine


def test_serve_keeps_the_playground_to_loopback_and_away_from_a_real_slack(tmp_path: Path) -> None:
    with serving(tmp_path, SLACK_BOT_TOKEN="xoxb-real") as (_, said):
        assert "playground" not in said  # a real Slack app's token: serve answers Slack, not the page
    refused = subprocess.run(
        [sys.executable, "-m", "agent_runtime", "serve", "--host", "0.0.0.0", "--port", "0", "--playground"],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("SLACK_")},
    )
    assert refused.returncode == 2 and "loopback only" in refused.stderr


def test_a_port_in_use_or_out_of_range_is_one_line_and_the_usage_exit_code(tmp_path: Path) -> None:
    """Whatever stands in the way of listening is said in one line naming the port and what to do, exit 2 (usage),
    never a traceback; ``make playground PORT=N`` passes the port on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLACK_")} | {"AGENT_STATE_DIR": str(tmp_path)}
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        refused = subprocess.run(
            [sys.executable, "-m", "agent_runtime", "serve", "--port", str(port)],
            capture_output=True, text=True, timeout=60, env=env, cwd=REPO,
        )  # fmt: skip
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.splitlines() == [
        f"agent-runtime: error: cannot listen on 127.0.0.1:{port} (Address already in use): "
        "choose another port with --port N (make playground PORT=N)"
    ]
    dry = subprocess.run(["make", "-n", "-s", "playground", "PORT=8123"], capture_output=True, text=True, cwd=REPO)
    assert "serve --playground --port 8123" in dry.stdout


@settings(max_examples=40, deadline=None)
@given(st.one_of(st.integers(max_value=-1), st.integers(min_value=65536), st.text(min_size=1).filter(_not_int)))
def test_argparse_refuses_any_port_outside_0_to_65535(port: object) -> None:
    from agent_runtime.cli import main

    said = io.StringIO()
    with redirect_stderr(said), pytest.raises(SystemExit) as exited:
        main(["serve", f"--port={port}"])
    assert exited.value.code == 2
    assert "argument --port:" in said.getvalue() and "Traceback" not in said.getvalue()
