"""The runtime against llama.cpp's real server and a real model (Gemma 3 270M): what its tokenizer, its
context limit and its chat templates do to a run, and that none of it fails one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import pytest
from agent_runtime import Agent, RunState, RunStatus, ToolRegistry, tool
from agent_runtime.context import ContextEngine, ContextSettings, TokenCounter
from agent_runtime.models import OpenAIChatModel, RetryPolicy
from agent_runtime.testing import Reply, ScriptedCall, ScriptedServer

from tests.conftest import make_workflow
from tests.real.conftest import N_CTX, STRICT_TEMPLATE

COUNTER = TokenCounter("gpt-4o")
Start = Callable[..., str]


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"{key}=42"


def agent(url: str, tools: tuple = (), **workflow: Any) -> Agent:
    client = openai.OpenAI(base_url=url, api_key="local", max_retries=0, timeout=120)
    model = OpenAIChatModel("gemma-3-270m", client=client, retry=RetryPolicy(max_attempts=2, base_delay=0.01))
    flow = make_workflow(window=N_CTX, output=128, **workflow)
    registry = ToolRegistry(list(tools))
    return Agent(flow, model, tools=registry, hooks=[ContextEngine(flow, registry, model=model)])


def thread_of(tokens: int) -> RunState:
    """A thread whose turns each stay under the offload threshold and together overflow only by Gemma's count
    (it spells numbers digit by digit; tiktoken takes three digits a token)."""
    messages: list[Any] = [{"role": "system", "content": "You help."}]
    turn = 0
    while COUNTER.messages(messages) < tokens:
        rows = " ".join(
            f"{turn}-{n}: {(turn * 7919 + n * 104729) % 10**9:09d} {n * 3571 % 10**6:06d}" for n in range(14)
        )
        messages += [{"role": "user", "content": f"Ledger {rows}"}, {"role": "assistant", "content": f"Noted {turn}."}]
        turn += 1
    return RunState(run_id="run-thread", workflow="test-flow", messages=messages)


def test_a_thread_that_overflows_only_by_the_servers_count_is_counted_by_the_server_first(llama_server: Start) -> None:
    """tiktoken counts the thread under the window; Gemma's tokenizer counts ~40 % more, over llama.cpp's n_ctx.
    The server counts the whole first request itself (/apply-template, /tokenize): the engine compacts before
    sending anything, and no request is refused."""
    flow = agent(llama_server(), context=ContextSettings(compaction_threshold=0.95))
    record = flow.run("Which invoice was settled first?", state=thread_of(1_150))
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert not [e for e in record.events if e["type"] == "context_overflow"]
    [calibration] = [e for e in record.events if e["type"] == "calibration"]
    assert calibration["trigger"] == "server_count" and calibration["scale"] > 1.2  # Gemma counts more
    answered = [c for c in record.model_calls if c.get("usage")]
    assert all(c["usage"]["prompt_tokens"] <= N_CTX for c in answered)


def test_a_server_that_cannot_count_teaches_the_engine_with_its_overflow_error(
    llama_server: Start, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As with servers that have no tokenize route (Ollama, LM Studio): the first request goes over n_ctx, the
    server's own error (exceed_context_size_error, n_prompt_tokens, n_ctx) calibrates, compacts, and the run
    completes."""
    monkeypatch.setattr(OpenAIChatModel, "count_tokens", lambda self, messages, tools: 0)
    flow = agent(llama_server(), context=ContextSettings(compaction_threshold=0.95))
    record = flow.run("Which invoice was settled first?", state=thread_of(1_150))
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    overflows = [e for e in record.events if e["type"] == "context_overflow"]
    calibrations = [e for e in record.events if e["type"] == "calibration"]
    assert overflows and calibrations and calibrations[0]["server_prompt"] > N_CTX
    assert calibrations[0]["scale"] > 1.2
    answered = [c for c in record.model_calls if c.get("usage")]
    assert all(c["usage"]["prompt_tokens"] <= N_CTX for c in answered)


def test_a_strict_chat_template_with_the_default_settings(llama_server: Start) -> None:
    """The template refuses the status as a late system message: the run falls back to a user message."""
    record = agent(llama_server(STRICT_TEMPLATE)).run("Say hello.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert [e["type"] for e in record.events].count("status_role_fallback") == 1


def test_a_tool_call_cut_off_by_the_output_limit_never_reaches_the_real_server_broken(llama_server: Start) -> None:
    """A scripted turn ends mid-call ('{"ke'); the thread then goes on against llama.cpp, which rebuilds the
    prompt from the history and must parse every call's arguments: no 500, the run goes on."""
    cut = Reply(calls=(ScriptedCall("lookup", '{"ke'),), finish_reason="length")
    with ScriptedServer([cut, Reply(text="noted")]) as scripted:
        first = agent(scripted.base_url, tools=(lookup,)).run("Look up alpha.")
    assert first.status is RunStatus.COMPLETED and first.state is not None
    assert first.state.tool_calls_used == 0  # the cut-off call was not run, and did not count
    record = agent(llama_server(), tools=(lookup,), max_tool_calls=2).run("And beta?", state=first.state)
    assert record.status in (RunStatus.COMPLETED, RunStatus.TOOL_CALL_LIMIT), record.stop_reason
    assert all(call["attempts"] == 1 for call in record.model_calls)  # no 500 retried
