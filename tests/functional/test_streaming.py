"""Streamed model calls against the scripted server over real HTTP: replies put back together from their chunks,
an idle timeout instead of a total one, the connection closed (so the server stops) on a stall or the deadline,
progress while tokens arrive, and every attempt in the run record."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from agent_runtime import Hook, Run, RunStatus
from agent_runtime import messages as m
from agent_runtime.models import ModelError, ModelRequest, OpenAIChatModel, RetryPolicy
from agent_runtime.models.stream import Progress
from agent_runtime.testing import Fail, Raw, Reply, ScriptedCall, ScriptedServer, calls, reply, server_error
from agent_runtime.testing.steps import Paced

from tests.conftest import make_agent

Start = Callable[..., ScriptedServer]
REQUEST = ModelRequest(messages=[m.system("s"), m.user("hello")])
STORY = " ".join(f"word{n}" for n in range(40))


def model(server: ScriptedServer, *, timeout: float = 5.0, attempts: int = 1) -> OpenAIChatModel:
    retry = RetryPolicy(max_attempts=attempts, base_delay=0.01, max_delay=0.02)
    return OpenAIChatModel("gpt-4o", client=server.client(), retry=retry, timeout=timeout)


def test_a_streamed_reply_is_put_back_together_with_its_usage(scripted: Start) -> None:
    """Text in word-sized deltas, two calls whose arguments arrive 8 characters at a time, the usage in a last
    chunk with no choices: the same response a whole reply gives."""
    big = {"query": "x" * 100, "n": 3}
    server = scripted(Reply(text=STORY, calls=(ScriptedCall("a", big), ScriptedCall("b", '{"broken'))))
    response = model(server).complete(REQUEST)
    assert response.text == STORY
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("a", m.json.dumps(big)), ("b", '{"broken')]
    assert response.usage is not None and response.usage.prompt_tokens > 0 and response.usage.completion_tokens > 0
    assert response.first_token_ms is not None and response.finish_reason == "tool_calls"
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}


def test_a_slow_server_never_times_out_while_tokens_flow(scripted: Start) -> None:
    """Was: one 120 s limit per attempt: a CPU server writing slowly timed out, 4 attempts took 485 s. 40 chunks
    50 ms apart take 2 s, four times the 0.5 s idle timeout: no timeout, no retry."""
    server = scripted(Paced(reply(STORY), interval=0.05))
    started = time.monotonic()
    response = model(server, timeout=0.5).complete(REQUEST)
    assert response.text == STORY and response.attempts == 1
    assert time.monotonic() - started >= 2.0


@pytest.mark.timed
def test_a_stalled_server_times_out_and_its_connection_is_closed(scripted: Start) -> None:
    """Three chunks, then silence: the idle timeout ends the attempt within about its length, and the server sees
    its client go away (a real one then stops generating instead of keeping its only slot busy)."""
    server = scripted(Paced(reply(STORY), stall_after=3, stall=30))
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"no reply for 1s \(AGENT_MODEL_TIMEOUT_SECONDS\)") as failed:
        model(server, timeout=1.0).complete(REQUEST)
    assert time.monotonic() - started < 3
    _wait_for(lambda: server.abandoned == [0])
    [attempt] = failed.value.failures
    assert attempt["outcome"] == "failed" and attempt["received_tokens"] == 2 and attempt["usage"] is None


@pytest.mark.timed
def test_the_deadline_ends_a_reply_that_is_still_flowing(scripted: Start) -> None:
    """Tokens keep coming, but the run's deadline comes first: the call ends on time and the connection closes."""
    server = scripted(Paced(reply(STORY), interval=0.1))
    started = time.monotonic()
    with pytest.raises(ModelError):
        model(server, timeout=5).complete(ModelRequest(messages=REQUEST.messages, timeout=1.0))
    assert 0.9 < time.monotonic() - started < 2.5
    _wait_for(lambda: server.abandoned == [0])


def test_progress_is_reported_while_tokens_arrive_and_a_failing_display_changes_nothing(scripted: Start) -> None:
    seen: list[Progress] = []

    def show(progress: Progress) -> None:
        seen.append(progress)
        raise RuntimeError("the terminal went away")

    server = scripted(calls(("lookup", {"key": "a" * 40})))
    response = model(server).complete(ModelRequest(messages=REQUEST.messages, on_progress=show))
    assert response.tool_calls[0].name == "lookup"
    assert [p.tokens for p in seen] == sorted(p.tokens for p in seen) and seen[-1].tokens > 3
    assert seen[-1].writing == "lookup" and seen[-1].tool_calls == 1


def test_a_server_that_ignores_stream_and_answers_whole_is_understood(scripted: Start) -> None:
    whole = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "gpt-4o",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": "whole"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 1, "total_tokens": 6},
    }
    server = scripted(Raw(whole))
    response = model(server).complete(REQUEST)
    assert response.text == "whole" and response.usage is not None and response.usage.total_tokens == 6


def test_every_attempt_is_in_the_run_record_and_the_progress_reaches_hooks(scripted: Start) -> None:
    """Was: `model_calls: []` after four failed attempts. Failed attempts are entries of their own (no usage),
    before the call that answered."""

    class Watch(Hook):
        def __init__(self) -> None:
            self.progress: list[Progress] = []

        def on_model_progress(self, run: Run, progress: Progress) -> None:
            self.progress.append(progress)

    watch = Watch()
    server = scripted(server_error(503), Fail(429, "slow down"), reply(STORY))
    agent = make_agent(server, hooks=[watch])
    agent.model = model(server, attempts=3)
    record = agent.run("go")
    assert record.status is RunStatus.COMPLETED
    outcomes = [(c.get("outcome"), c["attempts"], c["usage"] is None) for c in record.model_calls]
    assert outcomes == [("failed", 1, True), ("failed", 2, True), (None, 3, False)]
    assert record.model_calls[0]["error"].startswith("HTTP 503")
    assert watch.progress and watch.progress[-1].writing == "answer"


def _wait_for(condition: Callable[[], bool], seconds: float = 3.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the condition never held"
        time.sleep(0.02)
