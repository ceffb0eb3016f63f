"""The scripted model itself must be strict, or tests built on it prove nothing."""

from __future__ import annotations

import pytest
from agent_runtime import messages as m
from agent_runtime.models import ModelError, ModelRequest, OpenAIChatModel, RetryPolicy
from agent_runtime.testing import Reply, ScriptedRequest, ScriptedServer, ScriptError, reply


def _model(server: ScriptedServer) -> OpenAIChatModel:
    return OpenAIChatModel("gpt-4o", client=server.client(), retry=RetryPolicy(max_attempts=1))


def test_unused_steps_fail_the_test() -> None:
    with ScriptedServer([reply("a"), reply("b")]) as server:
        _model(server).complete(ModelRequest(messages=[m.user("hi")]))
    with pytest.raises(ScriptError, match="1 scripted step"):
        server.assert_complete()


def test_unexpected_requests_are_rejected_loudly() -> None:
    with ScriptedServer([]) as server, pytest.raises(ModelError, match="the script has no step left"):
        _model(server).complete(ModelRequest(messages=[m.user("hi")]))
    with pytest.raises(ScriptError, match="request #1"):
        server.assert_complete()


def test_orphaned_tool_calls_are_rejected_like_the_real_api() -> None:
    call: m.ToolCallDict = {"id": "c1", "type": "function", "function": {"name": "t", "arguments": "{}"}}
    with ScriptedServer([reply("never")]) as server:
        with pytest.raises(ModelError, match="tool call 'c1' has no result"):
            _model(server).complete(ModelRequest(messages=[m.user("hi"), m.assistant(None, [call])]))
        server.add()  # the step stays unused
    with pytest.raises(ScriptError):
        server.assert_complete()


def test_responders_see_the_request_and_their_errors_are_reported() -> None:
    seen: list[str] = []

    def echo(request: ScriptedRequest) -> Reply:
        seen.append(request.last_user_text())
        return Reply(text=request.last_user_text().upper())

    def broken(request: ScriptedRequest) -> Reply:
        raise KeyError("oops")

    with ScriptedServer([echo, broken]) as server:
        assert _model(server).complete(ModelRequest(messages=[m.user("hi")])).text == "HI"
        with pytest.raises(ModelError, match="responder raised KeyError"):
            _model(server).complete(ModelRequest(messages=[m.user("x")]))
    assert seen == ["hi"]
    with pytest.raises(ScriptError, match="responder raised"):
        server.assert_complete()


def test_records_every_request() -> None:
    with ScriptedServer([reply("a"), reply("b")]) as server:
        for text in ("one", "two"):
            _model(server).complete(ModelRequest(messages=[m.user(text)]))
    assert [r.last_user_text() for r in server.requests] == ["one", "two"]
    server.assert_complete()
