"""The dialects of OpenAI-compatible servers: each server's rule emulated in front of the scripted server (the
rule cited where it comes from), a run that must complete on it, and what the runtime learned.

* llama-cpp-python's server validates requests with pydantic (``llama_cpp/server/types.py``): an assistant
  message's ``content`` is typed ``str`` (``null`` → a 500, "Input should be a valid string"), and the output cap
  it reads is ``max_tokens`` (``CreateChatCompletionRequest`` has no ``max_completion_tokens``).
* OpenAI's reasoning models refuse ``max_tokens`` (400, ``param: "max_tokens"``, "Unsupported parameter").
* Gemma 3's official chat template (tests/fixtures/templates/gemma3.jinja) makes roles alternate and cannot
  render tool calls; llama.cpp answers "Unable to generate parser for this template" when it raises.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import jinja2
import jinja2.sandbox
from agent_runtime import Agent, RunStatus, ToolRegistry, tool
from agent_runtime import messages as m
from agent_runtime.context import ContextEngine, ContextSettings
from agent_runtime.models.dialect import Dialect
from agent_runtime.testing import Fail, ScriptedRequest, ScriptedServer, call, calls, reply
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import make_agent, make_workflow, model_for

Start = Callable[..., ScriptedServer]
GEMMA3 = (Path(__file__).parents[1] / "fixtures" / "templates" / "gemma3.jinja").read_text()


@tool
def lookup(key: str) -> str:
    """Look a key up.

    Args:
        key: The key.
    """
    return f"{key}=42"


def render(template: str, messages: list[m.Message]) -> str:
    """A chat template rendered as Hugging Face's tokenizers and vLLM render it."""

    def raise_exception(message: str) -> None:
        raise jinja2.TemplateError(message)

    env = jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    return env.from_string(template).render(messages=messages, bos_token="<bos>", add_generation_prompt=True)


def llama_cpp_python(request: ScriptedRequest) -> Fail | None:
    """Its request schema: content must be a string; the cap it honours is max_tokens."""
    for index, message in enumerate(request.messages):
        if message.get("content") is None:
            return Fail(500, f"1 validation error for CreateChatCompletionRequest\nmessages.{index}.content\n  "
                        "Input should be a valid string [type=string_type, input_value=None]")  # fmt: skip
    if "max_tokens" not in request.body:
        return Fail(400, "the test server needs max_tokens: it ignores max_completion_tokens")
    return None


def gemma_on_llama_cpp(request: ScriptedRequest) -> Fail | None:
    try:
        render(GEMMA3, request.messages)
    except jinja2.TemplateError as error:
        return Fail(400, f"Unable to generate parser for this template. Automatic parser generation failed: \n"
                    f"Error: Jinja Exception: {error}", error_type="invalid_request_error")  # fmt: skip
    return None


def test_requests_to_openai_and_to_other_servers_are_shaped_for_each() -> None:
    request = type("R", (), {"messages": [m.assistant(None, [_call("c1")]), m.tool_result("c1", "x")],
                             "tools": [], "max_output_tokens": 99, "tool_choice": None})()  # fmt: skip
    openai_body = Dialect.for_url("https://api.openai.com/v1").body("o3", request)
    assert openai_body["max_completion_tokens"] == 99 and "max_tokens" not in openai_body
    assert openai_body["messages"][0]["content"] is None
    local = Dialect.for_url("http://127.0.0.1:8080/v1").body("gemma", request)
    assert local["max_completion_tokens"] == local["max_tokens"] == 99
    assert local["messages"][0]["content"] == ""
    assert request.messages[0]["content"] is None  # the stored history is never changed


def test_llama_cpp_python_gets_a_cap_it_reads_and_no_null_content(scripted: Start) -> None:
    """Was: only max_completion_tokens (7,584 tokens generated in a run capped at 4,096) and content null on
    tool-call messages (a 500, retried four times)."""
    server = scripted(call("lookup", {"key": "a"}), reply("a is 42"), intercept=llama_cpp_python)
    record = make_agent(server, tools=[lookup]).run("What is a?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert not server.intercepted and all(r.body["max_tokens"] == 1024 for r in server.requests)


def test_a_server_that_refuses_null_content_teaches_an_openai_shaped_dialect_once(scripted: Start) -> None:
    """An endpoint first shaped for OpenAI (null content) meets llama-cpp-python's schema: one refused request,
    not retried as if transient, then "" from there on; the run record says what changed."""
    server = scripted(call("lookup", {"key": "a"}), reply("a is 42"), intercept=llama_cpp_python)
    agent = make_agent(server, tools=[lookup])
    agent.model.dialect.empty_content = None  # type: ignore[attr-defined]
    record = agent.run("What is a?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert len(server.intercepted) == 1 and "valid string" in record.model_calls[1]["error"]
    [event] = [e for e in record.events if e["type"] == "endpoint_adapted"]
    assert 'content ""' in event["change"]


def test_a_refused_max_tokens_is_not_sent_again(scripted: Start) -> None:
    def reasoning_model(request: ScriptedRequest) -> Fail | None:
        if "max_tokens" in request.body:
            return Fail(400, "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
                        "'max_completion_tokens' instead.", code="unsupported_parameter")  # fmt: skip
        return None

    server = scripted(reply("one"), reply("two"), intercept=reasoning_model)
    agent = make_agent(server)
    assert agent.run("first").status is RunStatus.COMPLETED
    assert agent.run("second").status is RunStatus.COMPLETED
    assert len(server.intercepted) == 1  # learned once for the endpoint
    assert all(r.body["max_completion_tokens"] == 1024 for r in server.requests)


def test_gemma_3_official_template_on_llama_cpp_with_tools_and_a_user_status(scripted: Start) -> None:
    """Was: status_role user put two user messages side by side, and any tool call or result in the history made
    llama.cpp refuse the request ("Unable to generate parser for this template"). Now: one refusal, then calls
    and results are sent as text with roles alternating, and the run completes."""
    server = scripted(
        calls(("lookup", {"key": "a"}), ("lookup", {"key": "b"})),
        call("lookup", {"key": "c"}),
        reply("a, b and c are 42"),
        intercept=gemma_on_llama_cpp,
    )
    workflow = make_workflow(context=ContextSettings(status_role="user"))
    tools, model = ToolRegistry([lookup]), model_for(server)
    agent = Agent(workflow, model, tools=tools, hooks=[ContextEngine(workflow, tools, model=model)])
    record = agent.run("What are a, b and c?")
    assert record.status is RunStatus.COMPLETED, record.stop_reason
    assert len(server.intercepted) == 1
    assert [e["type"] for e in record.events].count("endpoint_adapted") == 1
    answered = [r for r in server.requests if r not in server.intercepted]
    assert all(render(GEMMA3, r.messages) for r in answered)
    last = render(GEMMA3, answered[-1].messages)
    assert '[called lookup({"key": "c"})' in last and "[result of lookup · call" in last and "c=42" in last


# The property: whatever the history, the text dialect renders under Gemma 3's template and loses no text.
WORDS = st.text(alphabet="abcdefghij \n{}:", min_size=1, max_size=12).filter(lambda t: t.strip())


@st.composite
def histories(draw: st.DrawFn) -> list[m.Message]:
    messages: list[m.Message] = [m.system("You help."), m.user(draw(WORDS))]
    for turn in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["answer", "calls", "user", "system", "empty"]))
        if kind == "calls":
            ids = [f"c{turn}_{n}" for n in range(draw(st.integers(1, 3)))]
            text = draw(st.one_of(st.none(), WORDS))
            messages.append(m.assistant(text, [_call(i, draw(WORDS)) for i in ids]))
            messages += [m.tool_result(i, draw(WORDS)) for i in ids]
        elif kind == "answer":
            messages.append(m.assistant(draw(WORDS)))
        elif kind == "user":
            messages.append(m.user(draw(WORDS)))
        elif kind == "system":  # a status, or a compaction's note
            messages.append(m.system(draw(WORDS)))
    return messages


@settings(max_examples=150, deadline=None, derandomize=True)
@given(history=histories())
def test_the_text_dialect_always_renders_under_an_alternating_template_and_keeps_every_text(
    history: list[m.Message],
) -> None:
    dialect = Dialect(caps=["max_tokens"], empty_content="", alternate=True, tools_as_text=True)
    rendered = render(GEMMA3, dialect.messages(history))
    texts = [m.text_of(message).strip() for message in history]
    texts += [c["function"]["arguments"].strip() for message in history for c in message.get("tool_calls", [])]
    assert all(text in rendered for text in texts if text)


def _call(call_id: str, arguments: str = "{}") -> m.ToolCallDict:
    return {"id": call_id, "type": "function", "function": {"name": "lookup", "arguments": json.dumps(arguments)}}
