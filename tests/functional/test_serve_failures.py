"""What serve's worker does when a run cannot be what the webhook queued (issue 54's newcomer): a workflow file
broken while serve runs is a failed run that says which key or line, never a mention dropped with a traceback.

Through the real path: the playground's page sends the mention, serve's webhook queues it, serve's worker takes it
and answers in the thread the Web API keeps; the run's record is what ``runs list``/``runs show`` read."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.errors import ConfigError
from agent_runtime.service.answer import APOLOGY
from agent_runtime.stores import LocalStore, RunStore
from agent_runtime.testing import ScriptedServer
from agent_runtime.testing.steps import Paced, Reply
from agent_runtime.workflows import WorkflowError, load_workflow
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.playground_support import HELPER, act, page_token, playground, until


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Any:
    folder = tmp_path_factory.mktemp("served")
    with playground(folder, {"helper": HELPER}) as server:
        yield server, page_token(server.url), folder / "workflows" / "helper.yaml"


def _mutated(draw: st.DrawFn) -> str:
    """The file as an editor leaves it: a key misspelt, a bracket left open, a line cut, a character typed."""
    text = HELPER
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["delete", "insert", "key"]))
        if edit == "delete":
            text = text[:at] + text[at + draw(st.integers(1, 12)) :]
        elif edit == "insert":
            text = text[:at] + draw(st.sampled_from(["[", "]", "{", ":", "'", "\t", "x", "\n  y: 1", "-"])) + text[at:]
        else:
            key = draw(st.sampled_from(["model:", "triggers:", "slack:", "channels:", "prompt:", "name:"]))
            text = text.replace(key, key[:-2] + key[-1], 1)  # `max_tool_calls` → `max_tool_call`
    return text


mutated = st.composite(_mutated)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=mutated())
@example(text=HELPER)  # the file as it was: answered
def test_a_workflow_file_broken_while_serving_is_a_failed_run_that_says_why(served: Any, text: str) -> None:
    """Whatever the file says now, the mention queued for it ends in the thread: the workflow's answer if the file
    reads, else the apology with the run's id and the file's first problem (never a traceback), and a failed run
    in the store."""
    server, token, path = served
    path.write_text(text)
    try:
        load_workflow(str(path), path.parent)
        problem = None
    except ConfigError as error:
        problem = error.problems[0] if isinstance(error, WorkflowError) and error.problems else None
        readable = False
    else:
        readable = True
    before = len(server.outcomes)
    said = act(server.url, "message", {"channel": "C0HELP", "text": "@agent what changed?"}, token)
    assert said["sent"]["answer"] == {"status": "queued", "workflow": "helper"}
    outcome = until(lambda: server.outcomes[before:], what="the worker")[0]
    assert outcome != "error"  # the worker's loop caught nothing: the handler made it an outcome
    assert server.playground is not None
    thread = server.playground.workspace.thread
    answer = until(lambda: [m for m in thread("C0HELP", said["ts"]) if m.get("bot_id")], what="the reply")[-1]
    runs = RunStore(server.store)
    row = next(r for r in runs.list_runs(limit=100) if r.run_id in answer["text"] or readable)
    if readable:
        assert outcome == "answered"
        return
    assert outcome == "failed" and row.status == "failed"
    assert answer["text"].startswith(APOLOGY.format(run_id=row.run_id))
    assert "cannot be read" in answer["text"] and "Traceback" not in answer["text"]
    if problem is not None:
        assert f"helper.yaml cannot be read: {problem.key}:" in answer["text"]
    record = runs.load_record(row.run_id)
    assert record is not None and "WorkflowError" in str(record["stop_reason"])
    assert [r.status for r in runs.list_runs(status="failed", limit=100) if r.run_id == row.run_id] == ["failed"]


WORDS = " ".join(f"word{n}" for n in range(30))


def _serve(folder: Path, model: ScriptedServer) -> tuple[subprocess.Popen[str], str]:
    """``agent-runtime serve`` in a process of its own, as a person starts it; the playground's address."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SLACK_", "JIRA_"))}
    env |= {"AGENT_STATE_DIR": str(folder / "state"), "AGENT_WORKFLOWS_DIR": str(folder / "workflows")}
    env |= {"AGENT_SANDBOX": "off", "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test"}
    process = subprocess.Popen([sys.executable, "-m", "agent_runtime", "serve", "--port", "0"], env=env,
                               stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True, cwd=REPO)  # fmt: skip
    assert process.stderr is not None
    said = ""
    while "Ctrl-C stops" not in said and process.poll() is None:
        said += process.stderr.readline()
    return process, re.findall(r"open (http://127\.0\.0\.1:\d+)/ in a browser", said)[0]


def _thread(url: str, ts: str) -> list[dict[str, Any]]:
    with urllib.request.urlopen(f"{url}/play/ui/changes?after=-1", timeout=10) as response:
        records = json.loads(response.read())["records"]
    kept = {r["key"]: r["body"] for r in records if r["kind"] == "message"}  # the latest of each message
    return [m for m in kept.values() if m.get("thread_ts") == ts and m.get("bot_id") and not m.get("_deleted")]


# Alone, after the others (as the wall-time tests run): its Ctrl-C must land while the first answer streams.
@pytest.mark.timed
def test_a_run_serve_was_working_on_when_stopped_lists_interrupted_and_is_resumed_when_it_starts(
    tmp_path: Path,
) -> None:
    """A mention streaming when serve gets Ctrl-C: its run listed running while it worked, interrupted once serve
    is gone, and taken up again when serve starts — answered in its thread, where the half answer and the working
    message are gone and no stream is left open (test_resume_debris.py cuts it at every Slack call)."""
    (tmp_path / "workflows").mkdir()
    (tmp_path / "workflows" / "helper.yaml").write_text(HELPER)
    runs = RunStore(LocalStore(tmp_path / "state"))
    # The first answer streams for 12 s, so serve's Ctrl-C lands while it streams (a 1.2 s answer had ended first in
    # a clean clone's CI, twice); the resumed one is quick.
    slow = Paced(Reply(text=" ".join(f"word{n}" for n in range(300))), interval=0.04)
    with ScriptedServer([lambda _: slow, *[lambda _: Paced(Reply(text=WORDS), interval=0.001)] * 3]) as model:
        serve, url = _serve(tmp_path, model)
        try:
            said = act(url, "message", {"channel": "C0HELP", "text": "@agent what changed?"}, page_token(url))
            [row] = until(lambda: runs.list_runs(status="running"), what="the run listed running")
            until(lambda: any("word1" in str(m.get("text")) for m in _thread(url, said["ts"])), what="the stream")
        finally:
            serve.send_signal(signal.SIGINT)
            serve.wait(15)
        listed = subprocess.run([sys.executable, "-m", "agent_runtime", "runs", "list"], capture_output=True,
                                text=True, env=os.environ | {"AGENT_STATE_DIR": str(tmp_path / "state")})  # fmt: skip
        assert [line for line in listed.stdout.splitlines() if row.run_id in line and "interrupted" in line], listed
        serve, url = _serve(tmp_path, model)
        try:
            done = until(lambda: runs.summary(row.run_id).status == "completed", what="the run resumed")
            answer = until(lambda: [m for m in _thread(url, said["ts"]) if WORDS in str(m.get("text"))], what="it")
            left = until(lambda: _thread(url, said["ts"]) if runs.reply_state(row.run_id) == "posted" else None)
        finally:
            serve.send_signal(signal.SIGINT)
            serve.wait(15)
    assert done and len(answer) == 1  # the resumed run's answer, in its thread
    assert [m["ts"] for m in left] == [answer[0]["ts"]], [m.get("text") for m in left]  # no working message left
    assert left[0]["_stream"]["state"] == "stopped"  # and no cursor
