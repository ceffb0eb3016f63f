"""A run that cannot even be prepared — Slack unreachable, or a method refused (``reactions.get`` for the message
a reaction marks) — ends in a failed run record that says why, with one log line, never a traceback: under
``agent-runtime serve`` (the real CLI, real HTTP, nothing listening where Slack should be) and in the worker
against the fake Slack API (the apology in the thread, the queue message not redelivered)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from agent_runtime.stores import LocalStore, RunStore

from tests.slack_support import FLOW, PARENT, REPLY, reaction
from tests.triggers_support import SLACK_SECRET, slack_request


def closed_port() -> int:
    """A port nothing listens on (bound, then released): a Slack that cannot be reached."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agent_runtime", *args], capture_output=True, text=True, env=env,
                          timeout=60)  # fmt: skip


def test_a_reaction_under_serve_with_slack_unreachable_is_a_failed_run_not_a_traceback(tmp_path: Path) -> None:
    (tmp_path / "jira-draft.yaml").write_text(FLOW)
    state = tmp_path / "state"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "OPENAI_", "AGENT_"))} | {
        "AGENT_WORKFLOWS_DIR": str(tmp_path), "AGENT_STATE_DIR": str(state), "AGENT_SANDBOX": "off",
        "SLACK_SIGNING_SECRET": SLACK_SECRET, "SLACK_BOT_TOKEN": "xoxb-local",
        "SLACK_API_URL": f"http://127.0.0.1:{closed_port()}/api/"}  # fmt: skip
    serve = subprocess.Popen([sys.executable, "-m", "agent_runtime", "serve", "--port", "0"], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(serve.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        deadline = time.monotonic() + 30
        while not any("serving " in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.05)
        url = next(line for line in lines if "serving " in line).split("serving ", 1)[1].split("/slack/events")[0]
        body, headers = slack_request(reaction("EvDown"))
        request = urllib.request.Request(f"{url}/slack/events", data=body, headers=headers, method="POST")
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read()) == {"status": "queued", "workflow": "jira-draft"}
        deadline = time.monotonic() + 45  # the run's line comes once its apology was tried (Slack's retries)
        while not any("reactions.get" in line for line in lines) and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(timeout=30)
        reader.join(timeout=10)
    said = "".join(lines)
    assert "Traceback" not in said, said[-3000:]
    listed = RunStore(LocalStore(state)).list_runs()
    [row] = listed
    assert row.workflow == "jira-draft" and row.status == "failed"
    failures = [line for line in said.splitlines() if "reactions.get" in line]
    assert len(failures) == 1, said  # one line says it
    shown = cli("runs", "show", row.run_id, env=env)
    assert shown.returncode == 0
    why = shown.stdout.split("why it ended:", 1)[1]
    assert "the message reacted to could not be read: Slack reactions.get failed" in why and "refused" in why
    assert row.run_id in cli("runs", "list", "--status", "failed", env=env).stdout


def test_a_refused_reactions_get_is_a_failed_run_with_an_apology_in_the_thread(system, scripted, tmp_path) -> None:
    """The app without the reactions:read scope: the run fails saying so, the thread gets the apology, the
    message is answered (a redelivery is a duplicate), and the model is never asked about a message unread."""
    (tmp_path / "jira-draft.yaml").write_text(FLOW)
    server = scripted()
    s = system(server)
    s.apis.refuse["reactions.get"] = "missing_scope"
    queued = s.post("/slack/events", *slack_request(reaction("EvScope")))
    assert json.loads(queued["body"])["status"] == "queued"
    assert s.deliver() == ["failed"]
    assert server.requests == []
    [row] = [r for r in s.worker.process.runs.list_runs() if r.workflow == "jira-draft"]
    record = s.worker.process.runs.load_record(row.run_id)
    assert record is not None and record["status"] == "failed"
    assert "Slack reactions.get failed: missing_scope" in record["stop_reason"]
    posted = s.apis.named("chat.postMessage") + s.apis.named("chat.update")
    assert any(str(p.get("text", "")).startswith("Sorry") for p in posted)
    assert {p.get("thread_ts") for p in s.apis.named("chat.postMessage")} <= {REPLY, PARENT}
    assert set(s.redeliver()) == {"duplicate"}


def test_a_run_under_way_that_slack_refuses_is_tried_again_not_failed(system, scripted, tmp_path) -> None:
    """Only a run that has not begun fails for its preparation: a suspended run's continuation that Slack
    refuses raises (SQS gives the message again) and keeps its checkpoint, and answers once Slack is back."""
    from agent_runtime.chat.exceptions import ReplyError
    from agent_runtime.deadline import Deadline
    from agent_runtime.testing import reply
    from agent_runtime.triggers.queue import decode

    (tmp_path / "jira-draft.yaml").write_text(FLOW)
    s = system(scripted(reply("Drafted: PROJ-? Queue consumer drops messages on retry.")))
    s.apis.threads[PARENT] = [{"ts": PARENT, "user": "U0ERIN", "text": "Anyone seen this?"},
                              {"ts": REPLY, "thread_ts": PARENT, "user": "U0ERIN", "text": "It drops."}]  # fmt: skip
    assert json.loads(s.post("/slack/events", *slack_request(reaction("EvLater")))["body"])["status"] == "queued"
    assert s.deliver(seconds=0, batches=1) == ["suspended"]
    s.apis.refuse["reactions.get"] = "internal_error"
    sqs = s.clients["sqs"]
    [message] = sqs.receive_message(QueueUrl=s.queue_url, MaxNumberOfMessages=1)["Messages"]
    with pytest.raises(ReplyError, match=r"reactions\.get failed: internal_error"):
        s.worker.handle(decode(message["Body"], s.store), deadline=Deadline.after(600))
    [row] = [r for r in s.worker.process.runs.list_runs() if r.workflow == "jira-draft"]
    assert row.status != "failed" and s.worker.process.runs.load_checkpoint(row.run_id) is not None
    del s.apis.refuse["reactions.get"]
    sqs.change_message_visibility(QueueUrl=s.queue_url, ReceiptHandle=message["ReceiptHandle"], VisibilityTimeout=0)
    assert s.deliver() == ["answered"]
