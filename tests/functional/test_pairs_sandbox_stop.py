"""A stop x the local sandbox's side-by-side calls (A x stop). A stop was only seen between steps, so a stopped
run's ``python`` call ran to its time limit (30 s by default) before the run ended. Invariant: a call whose
caller gives it up (its run stopped) ends within a check's slice, its Deno child killed through the protocol's
cancel line, while the Node process and the other callers' calls go on untouched; under serve, "stop" written in
one thread ends that run within the stop check's interval and the other thread's run answers with its result.

Real paths: the Node + Deno + Pyodide sandbox (the slow scripts sleep with asyncio: no CPU burnt), and for serve
signed Slack events over HTTP into its webhook, its queue and lanes, the scripted model over HTTP and the replies
on a fake Slack API."""

from __future__ import annotations

import json
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from agent_runtime.config import RuntimeConfig
from agent_runtime.sandbox import LocalSandbox
from agent_runtime.sandbox.exceptions import SandboxCancelled
from agent_runtime.service.serve import LocalServer
from agent_runtime.stores import RunStore
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.testing.steps import Reply
from agent_runtime.triggers.config import TriggerConfig
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import REPO
from tests.sandbox_support import sleeping, until, waiting
from tests.triggers_support import BOT_USER, ENV, fake_apis, slack_mention, slack_request

SANDBOX = REPO / "functions" / "sandbox"
GIVE_UP_WITHIN = 3.0  # a 0.25 s slice, the reply's route and a busy 2-core machine; the script had 30 s to go


@pytest.fixture(scope="module")
def local() -> Iterator[LocalSandbox]:
    client = LocalSandbox(SANDBOX)
    client.check()
    client.run("None")  # Node started and a spare loading: the cases measure the cancel, not the first start
    yield client
    client.close()


@settings(max_examples=3, deadline=None)
@given(neighbours=st.integers(1, 2), stopped_at=st.floats(0.0, 1.0))
def test_a_given_up_call_ends_at_once_and_its_neighbours_and_the_process_go_on(
    local: LocalSandbox, neighbours: int, stopped_at: float
) -> None:
    stop = threading.Event()
    with ThreadPoolExecutor(neighbours + 1) as pool:
        slow = pool.submit(local.run, sleeping(30, "never"), cancelled=stop.is_set)
        others = [pool.submit(local.run, sleeping(2, f"n{i}")) for i in range(neighbours)]
        until(lambda: waiting(local) == neighbours + 1, "every call sent")
        node = local._process
        time.sleep(stopped_at)
        asked = time.monotonic()
        stop.set()
        with pytest.raises(SandboxCancelled):
            slow.result()
        given_up = time.monotonic() - asked
        assert [o.result().result for o in others] == [f"n{i}" for i in range(neighbours)]
    assert given_up < GIVE_UP_WITHIN, given_up
    assert local._process is node and local.run("'after'").result == "after"  # the process went on serving


def test_the_cancel_line_kills_the_calls_child_and_its_reply_says_so() -> None:
    """The protocol itself: a reply only comes when the call's child has ended, so a prompt reply to a 30 s
    script is its child killed (the Python client has forgotten the id by then: it drops that reply)."""
    node = subprocess.Popen(["node", "local.mjs"], cwd=SANDBOX, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert node.stdin is not None and node.stdout is not None
    try:
        for message in ({"id": 1, "event": {"code": sleeping(30, "never")}}, {"id": 2, "event": {"code": "'ok'"}}):
            node.stdin.write(json.dumps(message).encode() + b"\n")
        node.stdin.flush()
        first = json.loads(node.stdout.readline())
        assert (first["id"], first["reply"]["result"]) == (2, "ok")  # the process answers beside the slow call
        asked = time.monotonic()
        node.stdin.write(b'{"id": 1, "cancel": true}\n{"id": 3, "cancel": true}\n')  # 3: no such call, no reply
        node.stdin.flush()
        second = json.loads(node.stdout.readline())
        assert time.monotonic() - asked < GIVE_UP_WITHIN
        assert second["id"] == 1 and second["reply"]["status"] == "crashed"
        assert "given up by the caller" in second["reply"]["error"]
        # Given up at once, its child maybe still starting (CI drew "the sandbox did not start" here): the same reply.
        node.stdin.write(b'{"id": 4, "event": {"code": "1"}}\n{"id": 4, "cancel": true}\n')
        node.stdin.flush()
        third = json.loads(node.stdout.readline())
        assert third["id"] == 4 and third["reply"]["status"] in ("crashed", "ok"), third
        assert third["reply"]["status"] == "ok" or "given up by the caller" in third["reply"]["error"], third
    finally:
        node.stdin.close()
        node.wait(timeout=10)
    assert node.returncode == 0


CALC = """\
name: calc
description: Works numbers out.
prompt: You work numbers out with python.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
sandbox: {enabled: true, time_limit_seconds: 60}
triggers:
  slack: {channels: [C0REVIEW]}
"""
SLOW, STEADY = "1763800000.000100", "1763800100.000200"


def _post(server: LocalServer, event_id: str, ts: str, text: str, **event: str) -> None:
    body, headers = slack_request(slack_mention(event_id, ts=ts, text=f"<@{BOT_USER}> {text}", **event))
    request = urllib.request.Request(f"{server.url}/slack/events", data=body, headers=headers, method="POST")
    urllib.request.urlopen(request, timeout=10).close()


def answer(request: ScriptedRequest) -> Reply:
    results = request.tool_results()
    if results:
        return reply("worked out: " + " ".join(results.values()))
    if "slow" in request.last_user_text():
        return call("python", {"code": sleeping(30, "slow")})
    return call("python", {"code": sleeping(4, "steady")})


@pytest.mark.timed  # two sandbox calls side by side under serve: run alone
def test_stop_in_one_thread_ends_its_python_call_and_the_other_threads_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "calc.yaml").write_text(CALC)
    runtime = RuntimeConfig(workflows_dir=tmp_path, state_dir=tmp_path / "state", skills_dir=REPO / "skills",
                            use_demo_model=False, sandbox_mode="local", sandbox_dir=SANDBOX)  # fmt: skip
    with ScriptedServer([], intercept=answer) as model, fake_apis() as (apis, base):
        monkeypatch.setenv("OPENAI_BASE_URL", model.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        triggers = TriggerConfig.from_env({**ENV, "SLACK_BOT_TOKEN": "xoxb-test", "SLACK_API_URL": f"{base}/"})
        server = LocalServer(runtime, triggers, port=0).start()
        try:
            assert isinstance(server.sandbox, LocalSandbox)
            _post(server, "EvSlow", SLOW, "slow sum please")
            _post(server, "EvSteady", STEADY, "steady sum please")
            until(lambda: waiting(server.sandbox) == 2, "both python calls under way", timeout=30)  # type: ignore[arg-type]
            asked = time.monotonic()
            _post(server, "EvStop", "1763800000.000300", "stop", thread_ts=SLOW)
            # Two: the stop handled (its own lane), then the run that heard it
            until(lambda: server.outcomes.count("stopped") == 2, "the slow run stopped", timeout=20)
            stopped_within = time.monotonic() - asked
            until(lambda: "answered" in server.outcomes, "the steady run's answer", timeout=30)
        finally:
            server.close()
    # The stop check reads the store every 2 s, the call asks it every 0.25 s: the script had 30 s to go.
    assert stopped_within < 2 + GIVE_UP_WITHIN + 2, stopped_within
    # and the stop's wake-up of the run (for one not working now) is a duplicate: the run had ended
    assert sorted(server.outcomes) == ["answered", "duplicate", "stopped", "stopped"], server.outcomes
    runs = RunStore(server.store)
    records = [runs.load_record(s.run_id) or {} for s in runs.list_runs(limit=5)]
    by_status = {r["status"]: r for r in records}
    assert set(by_status) == {"completed", "stopped"}, [r["status"] for r in records]
    stopped = by_status["stopped"]
    assert stopped["stop_reason"] == "Stopped by <@U0DANA>."
    [slow_call] = stopped["tool_calls"]
    assert slow_call["is_error"] and slow_call["duration_ms"] < 15_000
    state, _ = runs.load_checkpoint(stopped["run_id"]) or (None, 0)
    assert state is not None and "stopped during this call" in str(state.messages[-1]["content"])
    assert "worked out: [python: ok" in by_status["completed"]["final_answer"]
    assert "steady" in by_status["completed"]["final_answer"]
    assert any("steady" in str(u.get("text")) for u in apis.named("chat.update"))
