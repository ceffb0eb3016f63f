from __future__ import annotations

import pytest
from agent_runtime import ConfigError, RunContext, ToolError, ToolRegistry, tool
from agent_runtime.files import InMemoryFileStore
from agent_runtime.models import ToolCall


@tool
def add(a: int, b: int = 2) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool(mutating=True)
def post_comment(ctx: RunContext, text: str) -> str:
    """Post a comment on the ticket.

    Args:
        text: What to say.
    """
    return f"posted in {ctx.run_id}: {text}"


@tool
def refuse(reason: str) -> str:
    """Always refuses.

    Args:
        reason: Why.
    """
    raise ToolError(f"refused: {reason}")


@tool
def crash() -> str:
    """Always crashes."""
    raise RuntimeError("disk on fire")


def _call(name: str, arguments: str) -> ToolCall:
    return ToolCall(id="call_1", name=name, arguments=arguments)


def test_schema_comes_from_hints_and_docstring() -> None:
    spec = add.spec()["function"]
    assert spec["name"] == "add"
    assert spec["description"] == "Add two numbers."
    params = spec["parameters"]
    assert params["required"] == ["a"]
    assert params["properties"]["a"] == {"type": "integer", "description": "The first number."}
    assert params["properties"]["b"]["default"] == 2
    assert params["additionalProperties"] is False


def test_context_parameter_is_hidden_and_injected() -> None:
    assert list(post_comment.parameters["properties"]) == ["text"]
    assert post_comment.mutating is True
    ctx = RunContext(run_id="run-1", workflow="w", files=InMemoryFileStore())
    assert post_comment.invoke({"text": "hi"}, ctx) == "posted in run-1: hi"


def test_non_string_results_are_rendered_as_json() -> None:
    assert add.invoke({"a": 1}) == "3"


def test_tool_without_docstring_is_a_config_error() -> None:
    def bare(x: int) -> int:
        return x

    with pytest.raises(ConfigError, match="needs a docstring"):
        tool(bare)


def test_bad_tool_name_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="tool name"):
        tool(name="has space")(add.fn)


def test_registry_rejects_duplicates_and_non_tools() -> None:
    with pytest.raises(ConfigError, match="two tools"):
        ToolRegistry([add, add])
    with pytest.raises(ConfigError, match="not a Tool"):
        ToolRegistry([print])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("add", '{"a": 1, "b": 5}', "6"),
        ("add", '{"a": "x"}', "ERROR: invalid arguments: a: Input should be a valid integer"),
        ("add", '{"a": 1, "c": 3}', "ERROR: invalid arguments: c: Extra inputs are not permitted"),
        ("add", '{"a": 1,', "ERROR: the arguments are not valid JSON (Expecting property name"),
        ("add", "[1, 2]", "ERROR: the arguments must be a JSON object, not list"),
        ("nope", "{}", "ERROR: there is no tool named 'nope'; available: add, refuse, crash"),
        ("refuse", '{"reason": "policy"}', "ERROR: refused: policy"),
        ("crash", "", "ERROR: tool 'crash' failed: RuntimeError: disk on fire"),
    ],
)
def test_execute_turns_every_failure_into_a_result(name: str, arguments: str, expected: str) -> None:
    registry = ToolRegistry([add, refuse, crash])
    outcome = registry.execute(_call(name, arguments))
    assert outcome.content.startswith(expected)
    assert outcome.is_error is expected.startswith("ERROR")


def test_outcome_record_has_no_payload() -> None:
    outcome = ToolRegistry([add]).execute(_call("add", '{"a": 1}'))
    record = outcome.to_record()
    assert set(record) == {"id", "name", "is_error", "mutating", "duration_ms"}
