"""The server's own window, learned before the first request: the scripted server dressed as llama.cpp, vLLM,
LM Studio and Ollama (their routes and field names, testing/kinds.py), each with a window far smaller than the
workflow's, as when a shipped workflow meets a local server with only OPENAI_BASE_URL and AGENT_MODEL set."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import openai
import pytest
from agent_runtime import Agent, RunStatus, ToolRegistry
from agent_runtime.context import ContextEngine, ContextSettings, TokenCounter
from agent_runtime.files import InMemoryFileStore
from agent_runtime.files.documents import DOCUMENT_TOOLS
from agent_runtime.files.tools import FILE_TOOLS
from agent_runtime.models import OpenAIChatModel
from agent_runtime.models.probe import ServerInfo, probe
from agent_runtime.testing import ScriptedRequest, ScriptedServer, ServerKind, call, reply

from tests.conftest import make_workflow, model_for

Start = Callable[..., ScriptedServer]
COUNTER = TokenCounter("gpt-4o")
SOURCES = {
    "llama.cpp": "GET /props default_generation_settings.n_ctx",
    "vllm": "GET /v1/models max_model_len",
    "lmstudio": "GET /api/v0/models loaded_context_length",
    "ollama": "POST /api/show parameters num_ctx",
}


def drifting(scale: float) -> Callable[[dict[str, Any]], int]:
    """A server tokenizer that counts ``scale`` times tiktoken (Gemma counts 1.3-1.9 times)."""
    return lambda body: int((COUNTER.messages(body.get("messages", [])) + COUNTER.tools(body.get("tools", []))) * scale)


def agent_for(server: ScriptedServer, files: InMemoryFileStore, **kwargs: Any) -> Agent:
    """document-feedback's numbers: a 1M-token model, a 16k budget, 4,096 output tokens."""
    context = ContextSettings(context_budget=16_000, **kwargs)
    workflow = make_workflow(window=1_047_576, output=4_096, context=context, max_tool_calls=40)
    registry = ToolRegistry([*FILE_TOOLS, *DOCUMENT_TOOLS])
    model = model_for(server)
    return Agent(workflow, model, tools=registry, hooks=[ContextEngine(workflow, registry, model=model)], files=files)


def summary(request: ScriptedRequest) -> Any:
    return reply("## Current work\nReading app.log for the failed requests.") if request.is_compaction() else None


def log(lines: int) -> bytes:
    return "\n".join(
        f"2026-11-25 10:{n % 60:02d} ERROR request {n} failed: timeout after {n}ms" for n in range(lines)
    ).encode()


@pytest.mark.parametrize("kind", ["llama.cpp", "vllm", "lmstudio", "ollama"])
def test_a_server_window_far_below_the_workflows_is_learned_before_the_first_request(
    scripted: Start, kind: str
) -> None:
    """Was: a 4,096 server under a 16k budget with 4,096 output tokens: "must stay under 0", or requests over the
    server's window (and Ollama and LM Studio cut those silently). Now: no request passes the server's window,
    the output cap fits it, and the record says what was learned and where."""
    files = InMemoryFileStore()
    doc = files.put(log(400), name="app.log")
    script = [call("file_read", {"id": doc.id}), call("file_regex", {"id": doc.id, "pattern": "request 39[0-9] "})]
    server = scripted(*script, reply("Requests 390-399 timed out."), kind=ServerKind(kind, 4_096), intercept=summary)
    record = agent_for(server, files).run("Which requests failed last?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert server.overflowed == []
    [said] = [e for e in record.events if e["type"] == "server"]
    assert (said["server"], said["window"], said["source"], said["configured"]) == (kind, 4_096, SOURCES[kind], 16_000)
    for request in server.requests:
        cap = request.body["max_tokens"]
        assert cap == 512 and COUNTER.messages(request.messages) + cap <= 4_096  # an eighth of the window


def test_llama_cpp_and_vllm_count_the_first_request_so_the_first_request_fits(scripted: Start) -> None:
    """A tokenizer that counts 1.8 times tiktoken: the server's own count of the first request calibrates before
    anything is sent (was: the start-up check and the first request used uncalibrated counts)."""
    for kind in ("llama.cpp", "vllm"):
        server = scripted(reply("ok"), kind=ServerKind(kind, 4_096), token_counter=drifting(1.8))
        record = agent_for(server, InMemoryFileStore()).run("Summarise: " + "ticket 12345 failed. " * 200)
        assert record.status is RunStatus.COMPLETED, record.stop_reason
        assert server.overflowed == []
        [calibration] = [e for e in record.events if e["type"] == "calibration"]
        assert calibration["trigger"] == "server_count" and calibration["scale"] >= 1.8
        assert "POST /tokenize" in server.described


def test_what_a_server_said_is_asked_once_per_process(scripted: Start) -> None:
    server = scripted(reply("one"), reply("two"), kind=ServerKind("llama.cpp", 8_192))
    agent = agent_for(server, InMemoryFileStore())
    assert agent.run("first").status is RunStatus.COMPLETED
    assert agent.run("second").status is RunStatus.COMPLETED
    assert server.described.count("GET /props") == 1


def test_ollama_without_num_ctx_runs_at_its_default_window(scripted: Start) -> None:
    server = scripted(kind=ServerKind("ollama", 32_768, ollama_num_ctx=False))
    info = probe(server.client(), "qwen2.5:7b")
    assert info == ServerInfo("ollama", 4_096, "Ollama's default num_ctx (the model sets none)")


def test_servers_that_say_nothing_and_openai_itself_keep_the_workflows_window(scripted: Start) -> None:
    server = scripted(reply("ok"))
    assert probe(server.client(), "gpt-4o") == ServerInfo("unknown")
    assert agent_for(server, InMemoryFileStore()).run("hi").status is RunStatus.COMPLETED
    assert server.requests[0].body["max_tokens"] == 4_096
    client = openai.OpenAI(base_url="https://api.openai.com/v1", api_key="unused", max_retries=0)
    remote = OpenAIChatModel("gpt-4.1", client=client)
    assert remote.describe() == ServerInfo("openai")  # asked nothing: no request leaves this machine


def test_a_window_too_small_for_the_prompt_and_tools_is_a_clear_error_before_any_request(scripted: Start) -> None:
    server = scripted(kind=ServerKind("llama.cpp", 1_024))
    prompt = "You review documents. " * 120
    workflow = make_workflow(window=128_000, prompt=prompt)
    registry = ToolRegistry([*FILE_TOOLS, *DOCUMENT_TOOLS])
    model = model_for(server)
    agent = Agent(workflow, model, tools=registry, hooks=[ContextEngine(workflow, registry, model=model)])
    with pytest.raises(Exception, match=r"too small for this workflow.*the server's window is 1,024"):
        agent.run("go")
    assert [r for r in server.requests] == []
