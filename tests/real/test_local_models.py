"""What a new user does first: a shipped workflow against a local server with only OPENAI_BASE_URL and AGENT_MODEL
set, on llama.cpp's real server with real models and their official chat templates; then the hard cases: a tool
loop in a 2,048 window, a template that wants alternating roles with the status as a user message, a slow server
and a stalled one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import openai
import pytest
from agent_runtime import Agent, RunState, RunStatus, ToolRegistry, messages
from agent_runtime.context import ContextEngine, ContextSettings
from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.models import ModelError, ModelRequest, OpenAIChatModel, RetryPolicy
from agent_runtime.testing import Reply, ScriptedRequest, ScriptedServer, call, reply

from tests.conftest import make_workflow
from tests.real.conftest import GEMMA3_TEMPLATE, Serve

REPO = Path(__file__).resolve().parents[2]
Start = Callable[[Serve], str]
# The models with their official templates: Gemma 3's (given: the GGUF has none) and SmolLM2's (in its GGUF).
# Both servers cap a reply at 256 tokens (-n): a small model's ramble stays short, and that cap is the server's.
MODELS = {"gemma3": Serve("gemma", template=GEMMA3_TEMPLATE, n_predict=256), "smollm2": Serve("smollm2", n_predict=256)}
MODEL_NAMES = {"gemma3": "gemma-3-270m", "smollm2": "smollm2-135m-instruct"}


def serve(name: str, n_ctx: int) -> Serve:
    return Serve(MODELS[name].model, n_ctx, MODELS[name].template, MODELS[name].n_predict)


@pytest.mark.parametrize("name", ["gemma3", "smollm2"])
@pytest.mark.parametrize("n_ctx", [8_192, 4_096])
def test_document_feedback_with_only_the_base_url_and_the_model_set(
    llama: Start, tmp_path: Path, name: str, n_ctx: int
) -> None:
    """Was: "must stay under 0 ... Raise context.context_budget" on a 4,096 server (the workflow reserves 4,096
    tokens for the answer), and on 8,192 requests the server refused. Now the window is learned from the server
    before the first request, the reply's cap fits it, and the run completes."""
    url = llama(serve(name, n_ctx))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENT_"))}
    env |= {"OPENAI_BASE_URL": url, "AGENT_MODEL": MODEL_NAMES[name], "AGENT_STATE_DIR": str(tmp_path)}
    files = [f"examples/documents/{doc}" for doc in ("webhook-retries-design.md", "platform-handbook.md")]
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "agent_runtime", "run", "document-feedback", "--json", "--message",
         "@examples/tickets/PROJ-1423.txt", *(arg for path in files for arg in ("--file", path))],
        capture_output=True, text=True, env=env, cwd=REPO, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    record = json.loads(result.stdout)
    assert record["status"] == "completed"
    [said] = [e for e in record["events"] if e["type"] == "server"]
    assert (said["server"], said["window"], said["configured"]) == ("llama.cpp", n_ctx, 16_000)
    assert f"window {n_ctx:,} tokens (GET /props" in result.stderr  # said on stderr too
    answered = [c for c in record["model_calls"] if c.get("usage")]
    assert answered and all(c["usage"]["prompt_tokens"] + n_ctx // 8 <= n_ctx for c in answered)
    assert [c for c in record["model_calls"] if c.get("outcome") == "failed"] == []
    _timing(f"document-feedback {name} n_ctx={n_ctx}", time.monotonic() - started, answered)


def log_lines(count: int) -> bytes:
    return "\n".join(
        f"2026-11-25T10:{n % 60:02d}:00Z ERROR delivery {n} to cust-{n * 7 % 100} failed: timeout after {n * 13}ms"
        for n in range(count)
    ).encode()


def scripted_start(files: InMemoryFileStore, window: int, **context: Any) -> tuple[RunState, Any]:
    """Three tool calls and their results (reads of a log, a search) in a ``window`` workflow, by a scripted model
    that never tires: the thread a real model then goes on with."""
    doc = files.put(log_lines(300), name="delivery.log")
    script = [
        call("file_read", {"id": doc.id, "start_line": 1, "end_line": 40}),
        call("file_regex", {"id": doc.id, "pattern": "cust-42 "}),
        call("file_read", {"id": doc.id, "start_line": 250, "end_line": 300}),
        reply("Deliveries to cust-42 time out; the last ones took over 3,000 ms."),
    ]

    def summary(request: ScriptedRequest) -> Any:
        return reply("## Current work\nReading delivery.log for cust-42.") if request.is_compaction() else None

    with ScriptedServer(script, intercept=summary) as server:
        agent = engine_agent(server.client(), "scripted", files, window, **context)
        record = agent.run("Which customer's deliveries time out, and since when?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert record.state is not None
    return record.state, record


def engine_agent(client: openai.OpenAI, model: str, files: InMemoryFileStore, window: int, **context: Any) -> Agent:
    flow = make_workflow(window=window, output=256, context=ContextSettings(**context), max_tool_calls=12)
    chat = OpenAIChatModel(model, client=client, retry=RetryPolicy(max_attempts=2, base_delay=0.01))
    registry = ToolRegistry(list(FILE_TOOLS))
    return Agent(flow, chat, tools=registry, hooks=[ContextEngine(flow, registry, model=chat)], files=files)


def local(url: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=url, api_key="local", max_retries=0)


@pytest.mark.parametrize("name", ["gemma3", "smollm2"])
def test_a_tool_loop_a_scripted_model_began_goes_on_in_a_2048_window(llama: Start, name: str) -> None:
    """Was: compaction almost every turn, each summary a model call freeing 1-10 % (one made the window bigger),
    and a compaction error. The thread's history (three reads and a search) goes on against the real server in
    a 2,048 window: it completes, and no request passes the window."""
    files = InMemoryFileStore()
    state, _ = scripted_start(files, 2_048)
    started = time.monotonic()
    record = engine_agent(local(llama(serve(name, 2_048))), MODEL_NAMES[name], files, 2_048).run(
        "And which deliveries failed last?", state=state
    )
    assert record.status in (RunStatus.COMPLETED, RunStatus.TOOL_CALL_LIMIT), record.stop_reason
    answered = [c for c in record.model_calls if c.get("usage")]
    assert all(c["usage"]["prompt_tokens"] + 256 <= 2_048 for c in answered)
    summaries = [c for c in record.model_calls if c.get("purpose") == "compaction"]
    assert len(summaries) <= 1  # a small window's summaries stop once one frees too little
    _timing(f"tool loop {name} n_ctx=2048", time.monotonic() - started, answered)


def test_an_alternating_template_with_the_status_as_a_user_message(llama: Start) -> None:
    """Was: status_role user put two user messages side by side, and Gemma 3's template refused every request
    ("Conversation roles must alternate"); with tool calls in the history llama.cpp refused to build a parser
    for it. Now the status joins the last user message, and after one refusal the calls and results go as
    text: the thread completes."""
    files = InMemoryFileStore()
    state, _ = scripted_start(files, 4_096, status_role="user")
    url = llama(serve("gemma3", 4_096))
    agent = engine_agent(local(url), MODEL_NAMES["gemma3"], files, 4_096, status_role="user")
    record = agent.run("Summarise what you found in one sentence.", state=state)
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    adapted = [e["change"] for e in record.events if e["type"] == "endpoint_adapted"]
    assert len(adapted) <= 1 and all("as text" in change for change in adapted)
    failed = [c for c in record.model_calls if c.get("outcome") == "failed"]
    assert len(failed) == len(adapted)  # each refusal taught something; none was retried blindly


def folded_start(files: InMemoryFileStore, window: int) -> tuple[RunState, Any]:
    """A scripted model reads a log in 24 parts with a note each: masking and folding leave a fold (a user
    message of rows) right after the request, then the last turns."""
    doc = files.put(log_lines(480), name="delivery.log")
    reads = [
        Reply(text=f"Part {n}: timeouts noted.", calls=(call("file_read", {"id": doc.id, "start_line": 20 * n + 1,
                                                                            "end_line": 20 * n + 20}).calls[0],))
        for n in range(24)
    ]  # fmt: skip
    flow = make_workflow(window=window, output=256, max_tool_calls=40)
    registry = ToolRegistry(list(FILE_TOOLS))
    with ScriptedServer([*reads, reply("Read it all.")]) as server:
        chat = OpenAIChatModel("scripted", client=server.client())
        agent = Agent(flow, chat, tools=registry, hooks=[ContextEngine(flow, registry, model=chat)], files=files)
        record = agent.run("Read delivery.log in parts of 20 lines.")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert record.state is not None
    return record.state, record


def test_a_thread_whose_old_turns_were_folded_goes_on(llama: Start) -> None:
    """A fold is a user message among the turns, next to the request: Gemma 3's official template wants roles
    alternating (neighbours are merged after one refusal; the strictest template we run). The thread goes on
    against the real server with its folded history and completes within the window."""
    name = "gemma3"
    files = InMemoryFileStore()
    state, first = folded_start(files, 8_192)
    assert any(e["type"] == "folding" for e in first.events)
    assert any(messages.text_of(m).startswith("[folded: ") for m in state.messages)
    record = engine_agent(local(llama(serve(name, 8_192))), MODEL_NAMES[name], files, 8_192).run(
        "Which deliveries failed last?", state=state
    )
    assert record.status in (RunStatus.COMPLETED, RunStatus.TOOL_CALL_LIMIT), record.stop_reason
    answered = [c for c in record.model_calls if c.get("usage")]
    assert answered and all(c["usage"]["prompt_tokens"] + 256 <= 8_192 for c in answered)
    adapted = [e["change"] for e in record.events if e["type"] == "endpoint_adapted"]
    assert len(adapted) <= 2  # each refusal teaches one rule, once


def test_a_slow_reply_streams_past_the_idle_timeout_and_a_stalled_one_is_closed(llama: Start) -> None:
    """Was: one 120 s limit per attempt, and an abandoned attempt kept llama.cpp's only slot generating for
    minutes. A 300-token reply takes seconds but never goes quiet for 1 s: it completes in one attempt. A
    request whose prompt takes longer to read than the idle timeout is abandoned and its connection closed: the
    server stops, and the next request is served at once (the abandoned one had 1,500 tokens to write)."""
    url = llama(Serve("gemma", 4_096, ignore_eos=True))
    chat = OpenAIChatModel("gemma-3-270m", client=local(url), retry=RetryPolicy(max_attempts=1), timeout=1.0)
    started = time.monotonic()
    slow = chat.complete(ModelRequest(messages=[messages.user("Count to a thousand.")], max_output_tokens=300))
    elapsed = time.monotonic() - started
    assert slow.usage is not None and slow.usage.completion_tokens == 300 and slow.attempts == 1
    assert elapsed > 2.0 and slow.first_token_ms is not None
    _timing("slow reply (300 tokens)", elapsed, [{"usage": asdict(slow.usage), "first_token_ms": slow.first_token_ms}])

    chat.describe()
    chat.dialect.progress = False  # no prompt-progress chunks: the prompt's reading is silence
    long = " ".join(f"row {n}: {n * 7919 % 100_000} units" for n in range(200))  # ~2,500 of Gemma's tokens
    stalled = ModelRequest(messages=[messages.user(long)], max_output_tokens=1_500)
    with pytest.raises(ModelError, match="no reply for 1s"):
        chat.complete(stalled)
    started = time.monotonic()
    patient = OpenAIChatModel("gemma-3-270m", client=local(url), retry=RetryPolicy(max_attempts=1), timeout=60.0)
    after = patient.complete(ModelRequest(messages=[messages.user("Hi.")], max_output_tokens=5))
    waited = time.monotonic() - started
    print(f"\nthe next request after a closed stall: {waited:.1f}s (behind an open one: ~22 s measured)")
    # Not behind 1,500 abandoned tokens: at this machine's speed (the slow reply's) they would take 5 x elapsed.
    # What is left is the stalled prompt's reading, which llama.cpp finishes before it sees the closed stream
    # (2-14 s seen, by machine); so the bound is half the abandoned tokens' time, not a fixed number of seconds.
    assert after.usage is not None and waited < max(12, 2.5 * elapsed)


def _timing(what: str, seconds: float, calls: list[dict[str, Any]]) -> None:
    """Per-call numbers on this CPU, for the README's table (printed with -s)."""
    prompt = sum(c["usage"]["prompt_tokens"] for c in calls)
    completion = sum(c["usage"]["completion_tokens"] for c in calls)
    first = [c["first_token_ms"] for c in calls if c.get("first_token_ms")]
    print(f"\n{what}: {seconds:.1f}s, {len(calls)} call(s), {prompt:,} prompt + {completion:,} completion tokens, "
          f"first token {min(first, default=0) / 1000:.1f}-{max(first, default=0) / 1000:.1f}s")  # fmt: skip
