from __future__ import annotations

from agent_runtime import messages as m


def _call(call_id: str) -> m.ToolCallDict:
    return {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}


def test_find_orphans_accepts_complete_pairs() -> None:
    history = [
        m.user("hi"),
        m.assistant(None, [_call("a"), _call("b")]),
        m.tool_result("a", "1"),
        m.tool_result("b", "2"),
    ]
    assert m.find_orphans(history) == []


def test_find_orphans_reports_call_without_result() -> None:
    history = [m.user("hi"), m.assistant(None, [_call("a"), _call("b")]), m.tool_result("a", "1"), m.user("next")]
    assert m.find_orphans(history) == ["message 1: tool call 'b' has no result"]


def test_find_orphans_reports_result_without_call() -> None:
    history = [m.user("hi"), m.tool_result("zzz", "1")]
    assert m.find_orphans(history) == ["message 1: tool result 'zzz' has no matching call"]


def test_find_orphans_reports_dangling_calls_at_the_end() -> None:
    assert m.find_orphans([m.user("hi"), m.assistant("x", [_call("a")])]) == ["message 1: tool call 'a' has no result"]


def test_pending_tool_calls_lists_unanswered_calls_of_last_assistant() -> None:
    history = [m.user("hi"), m.assistant(None, [_call("a"), _call("b")]), m.tool_result("a", "1")]
    assert [c["id"] for c in m.pending_tool_calls(history)] == ["b"]
    assert m.pending_tool_calls([*history, m.tool_result("b", "2")]) == []


def test_text_of_joins_text_parts() -> None:
    message: m.Message = {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "image_url"}]}
    assert m.text_of(message) == "a"
