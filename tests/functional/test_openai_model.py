"""The production model class against the scripted server, through the real openai client over HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from agent_runtime import messages as m
from agent_runtime.models import ContextLengthExceededError, ModelError, ModelRequest, OpenAIChatModel, RetryPolicy
from agent_runtime.testing import (
    Fail,
    Reply,
    ScriptedRequest,
    ScriptedServer,
    calls,
    context_overflow,
    rate_limited,
    reply,
    server_error,
)

Start = Callable[..., ScriptedServer]
REQUEST = ModelRequest(messages=[m.system("s"), m.user("hello")])


def _model(server: ScriptedServer, sleeps: list[float] | None = None, attempts: int = 4) -> OpenAIChatModel:
    policy = RetryPolicy(max_attempts=attempts, base_delay=0.01, max_delay=0.05)
    return OpenAIChatModel(
        "gpt-4o", client=server.client(), retry=policy, sleep=(sleeps.append if sleeps is not None else time.sleep)
    )


def test_text_answer_with_usage(scripted: Start) -> None:
    server = scripted(reply("hello there"))
    response = _model(server).complete(REQUEST)
    assert response.text == "hello there"
    assert response.finish_reason == "stop"
    assert response.usage is not None and response.usage.prompt_tokens > 0
    assert response.attempts == 1
    assert server.requests[0].body["model"] == "gpt-4o"


def test_parallel_tool_calls_are_parsed_and_tools_sent(scripted: Start) -> None:
    server = scripted(calls(("a", {"x": 1}), ("b", '{"broken')))
    tools = [{"type": "function", "function": {"name": "a", "parameters": {"type": "object"}}}]
    response = _model(server).complete(ModelRequest(messages=REQUEST.messages, tools=tools, max_output_tokens=77))
    assert [(c.name, c.arguments) for c in response.tool_calls] == [("a", '{"x": 1}'), ("b", '{"broken')]
    body = server.requests[0].body
    assert body["tools"] == tools and body["parallel_tool_calls"] is True and body["max_completion_tokens"] == 77


@pytest.mark.parametrize("failure", [rate_limited(), server_error(500), server_error(503), server_error(502)])
def test_transient_failures_are_retried(scripted: Start, failure: Fail) -> None:
    server = scripted(failure, failure, reply("ok"))
    sleeps: list[float] = []
    response = _model(server, sleeps).complete(REQUEST)
    assert response.text == "ok"
    assert response.attempts == 3
    assert len(sleeps) == 2 and sleeps[0] <= sleeps[1] * 2
    assert len(server.requests) == 3


def test_retry_after_header_sets_the_wait(scripted: Start) -> None:
    server = scripted(rate_limited(retry_after=0.02), reply("ok"))
    sleeps: list[float] = []
    _model(server, sleeps).complete(REQUEST)
    assert sleeps == [0.02]


def test_retries_are_bounded(scripted: Start) -> None:
    server = scripted(*[server_error(500)] * 3)
    with pytest.raises(ModelError) as caught:
        _model(server, [], attempts=3).complete(REQUEST)
    assert caught.value.status_code == 500 and caught.value.attempts == 3
    assert "failed after 3 attempt(s): HTTP 500" in str(caught.value)


def test_retries_stop_when_the_time_budget_would_be_exceeded(scripted: Start) -> None:
    server = scripted(rate_limited(retry_after=5))
    with pytest.raises(ModelError, match="HTTP 429"):
        _model(server, []).complete(ModelRequest(messages=REQUEST.messages, timeout=1.0))


def test_timeouts_are_retried(scripted: Start) -> None:
    def slow(request: ScriptedRequest) -> Reply:
        time.sleep(0.5)
        return Reply(text="too late")

    server = scripted(slow, reply("fast"))
    model = OpenAIChatModel("gpt-4o", client=server.client(), retry=RetryPolicy(base_delay=0.01), timeout=0.2)
    response = model.complete(REQUEST)
    assert response.text == "fast" and response.attempts == 2


def test_auth_failure_is_not_retried_and_says_what_to_check(scripted: Start) -> None:
    server = scripted(
        Fail(401, "Incorrect API key provided", code="invalid_api_key", error_type="invalid_request_error")
    )
    with pytest.raises(ModelError, match=r"HTTP 401 \(check OPENAI_API_KEY\)"):
        _model(server, []).complete(REQUEST)
    assert len(server.requests) == 1


def test_context_length_exceeded_is_typed(scripted: Start) -> None:
    server = scripted(context_overflow())
    with pytest.raises(ContextLengthExceededError, match="maximum context length is 8192"):
        _model(server, []).complete(REQUEST)


def test_context_overflow_without_code_is_recognised_by_its_text(scripted: Start) -> None:
    # vLLM-style servers send the sentence but no error code.
    message = "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens"
    server = scripted(Fail(400, message, error_type="BadRequestError"))
    with pytest.raises(ContextLengthExceededError):
        _model(server, []).complete(REQUEST)


def test_other_bad_requests_are_plain_model_errors(scripted: Start) -> None:
    server = scripted(Fail(400, "Invalid value for 'temperature'", error_type="invalid_request_error"))
    with pytest.raises(ModelError) as caught:
        _model(server, []).complete(REQUEST)
    assert not isinstance(caught.value, ContextLengthExceededError)


def test_unreachable_endpoint_is_a_model_error() -> None:
    server = ScriptedServer([])
    base_url = server.base_url
    server.close()  # nothing listens there any more
    import openai

    model = OpenAIChatModel(
        "gpt-4o",
        client=openai.OpenAI(base_url=base_url, api_key="x", max_retries=0),
        retry=RetryPolicy(max_attempts=2, base_delay=0.01),
    )
    with pytest.raises(ModelError, match=r"cannot connect to http://127.0.0.1:.*check OPENAI_BASE_URL"):
        model.complete(REQUEST)


LLAMA_CPP = {  # llama.cpp server (tools/server/utils.hpp, format_error_response / exceed_context_size_error)
    "error": {
        "code": 400,
        "message": "request (4150 tokens) exceeds the available context size (4096 tokens), try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 4150,
        "n_ctx": 4096,
    }
}


@pytest.mark.parametrize(
    ("body", "prompt", "window"),
    [
        (LLAMA_CPP, 4150, 4096),
        (  # vLLM (serving_engine.py: _validate_input)
            {
                "object": "error",
                "type": "BadRequestError",
                "code": 400,
                "message": (
                    "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
                    "(4000 in the messages, 1000 in the completion). Please reduce the length of the messages or "
                    "completion."
                ),
            },
            4000,
            4096,
        ),
        (  # OpenAI (and LiteLLM, which passes it through as ContextWindowExceededError)
            {
                "error": {
                    "code": "context_length_exceeded",
                    "type": "invalid_request_error",
                    "param": "messages",
                    "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in "
                    "9000 tokens. Please reduce the length of the messages.",
                }
            },
            9000,
            8192,
        ),
        (
            {
                "error": {
                    "message": "litellm.ContextWindowExceededError: litellm.BadRequestError: prompt is too long",
                    "type": None,
                    "code": "400",
                }
            },
            None,
            None,
        ),
    ],
    ids=["llama.cpp", "vllm", "openai", "litellm"],
)
def test_overflow_shapes_of_real_servers_are_recognised_with_their_numbers(
    scripted: Start, body: dict, prompt: int | None, window: int | None
) -> None:
    from agent_runtime.testing import Raw

    server = scripted(Raw(body, status=400))
    with pytest.raises(ContextLengthExceededError) as caught:
        _model(server, []).complete(REQUEST)
    assert (caught.value.prompt_tokens, caught.value.window) == (prompt, window)


@pytest.mark.parametrize(
    "message",
    [
        "Failed to parse tool call arguments as JSON: [json.exception.parse_error.101]",  # llama.cpp
        "1 validation error for CreateChatCompletionRequest\nmessages.2.content\n  Input should be a valid string",
        "Error: Jinja Exception: Invalid content type",  # a template raising
    ],
    ids=["llama.cpp-parse", "llama-cpp-python-validation", "template"],
)
def test_a_500_that_a_retry_cannot_fix_is_not_retried(scripted: Start, message: str) -> None:
    """llama.cpp answers a history it cannot parse or template with a 500, llama-cpp-python a request its schema
    refuses: the same request fails again (was: llama-cpp-python's retried four times)."""
    server = scripted(Fail(500, message))
    sleeps: list[float] = []
    with pytest.raises(ModelError, match="after 1 attempt"):
        _model(server, sleeps).complete(REQUEST)
    assert sleeps == []


def test_a_response_closed_before_its_first_byte_is_read_is_a_connection_cut(scripted: Start) -> None:
    """The deadline's watcher may close a streamed response just as reading starts: the transport then raises its
    StreamClosed, which was an internal error that failed the run (seen under load); it is now a cut like a close
    mid-read (the run suspends at its deadline, or the call is retried)."""
    import openai
    from agent_runtime.models.openai_chat import _bytes

    server = scripted(reply("never read"))
    stream = server.client().chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    stream.response.close()
    with pytest.raises(openai.APIConnectionError):
        list(_bytes(stream.response))


def test_a_404_names_the_model_and_a_base_url_without_its_v1_and_the_url_called(scripted: Start) -> None:
    """The usual 404 is OPENAI_BASE_URL without /v1 (the server has no route there), not a model name."""
    server = scripted()  # nothing reaches /v1/chat/completions
    import openai

    bare = server.base_url.removesuffix("/v1")
    client = openai.OpenAI(base_url=bare, api_key="x", max_retries=0)
    model = OpenAIChatModel("gpt-4o", client=client, retry=RetryPolicy(base_delay=0.01))
    with pytest.raises(
        ModelError, match=r"HTTP 404 \(check the model name, or OPENAI_BASE_URL: missing its /v1\?"
    ) as caught:
        model.complete(REQUEST)
    assert f"called {bare}/chat/completions" in str(caught.value) and caught.value.attempts == 1


@pytest.mark.parametrize("status", [501, 505])
def test_a_server_that_does_not_do_chat_is_not_retried_and_says_base_url(scripted: Start, status: int) -> None:
    server = scripted(Fail(status, f"Error code: {status}"))  # a second request would be a script error
    sleeps: list[float] = []
    with pytest.raises(ModelError, match=rf"HTTP {status} \(not retried: .*check OPENAI_BASE_URL, called http"):
        _model(server, sleeps).complete(REQUEST)
    assert len(server.requests) == 1 and sleeps == []
