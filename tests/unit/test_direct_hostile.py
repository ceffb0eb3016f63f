"""The demo model's direct calls read a person's words, which may be built to smuggle values or to stall it: over
messages of quotes inside values, a parameter named twice, a tool whose name is a prefix of another's, look-alike
letters and 100 KB pastes, it never crashes, never calls with a value the words do not hold, and reads each in
time linear in its length (a run of spaces after a parameter's name had taken seconds per 20 KB, quadratically)."""

from __future__ import annotations

import time
from typing import Any

from agent_runtime.testing.direct import respond
from agent_runtime.testing.steps import Reply, ScriptedCall, ScriptedRequest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.labelled_support import Labelled, labelled


def tool(name: str, **props: str) -> dict[str, Any]:
    properties = {p: {"type": kind} for p, kind in props.items()}
    return {"type": "function", "function": {"name": name, "parameters": {"type": "object",
            "properties": properties, "required": list(properties)}}}  # fmt: skip


TOOLS = [tool("post_comment", ticket="string", text="string"), tool("post", ticket="string"),
         tool("set_priority", ticket="string", level="integer")]  # fmt: skip


def asked(words: str) -> Any:
    return respond(ScriptedRequest(0, {"messages": [{"role": "user", "content": words}], "tools": TOOLS}))


PIECES = st.sampled_from([
    "post_comment", "post", "set_priority", "post_comment2", "p\u043est_comment",  # a Cyrillic o
    "ticket", "ticket=", "ticket:", "t\u0456cket", "\uff54\uff49\uff43\uff4b\uff45\uff54",
    "text", "text:", "text=", "and text", "level", "level=", "level:", "and", "on", "for", "with", "with ticket",
    "PAY-812", "PAY-8l2", "12", "-3", '"', "'", "`", "\u201c", "\u201d", ":", "=", ",", ";", "\n", " ", "  ",
    "the fix is in", "\u00a0", "\u200b",
])  # fmt: skip
WORDS = st.lists(PIECES, min_size=1, max_size=30).map(" ".join)


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(words=WORDS)
def test_a_call_holds_only_values_the_words_give(words: str) -> None:
    reply = asked(words)
    for call in reply.calls if reply is not None else ():
        assert call.name in words, (call, words)
        assert isinstance(call.arguments, dict)
        for value in call.arguments.values():
            assert str(value) in words, (call, words)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(said=labelled("post_comment"))
def test_several_labelled_values_each_end_where_the_next_label_begins(said: Labelled) -> None:
    spec = {"type": "function", "function": {"name": "post_comment", "parameters": said.parameters()}}
    request = ScriptedRequest(0, {"messages": [{"role": "user", "content": said.message}], "tools": [spec]})
    assert respond(request) == Reply(calls=(ScriptedCall("post_comment", said.values),)), said


HOSTILE = {
    "spaces after a label's colon": "post_comment ticket: a" + " " * 100_000 + "b",
    "spaces after a label": "post_comment ticket" + " " * 100_000 + "x",
    "spaces after a text": "post_comment on PAY-1: x" + " " * 100_000 + "and text",
    "a label again and again": "post_comment " + "ticket= " * 12_000,
    "a tool's name again and again": "post_comment " * 8_000,
    "an open quote": 'post_comment ticket "' + "a" * 100_000,
    "spaces and quotes": "post_comment text" + ' "' * 50_000,
    "labels in a list": "call post_comment with ticket" + " and text ticket=" * 10_000,
    "spaces in a list": "call post_comment with ticket" + " " * 100_000 + "a",
    "a value and labels": "post_comment ticket=a" + " text:" * 10_000 + " b" * 10_000,
}


def test_a_100_kb_message_is_read_in_time_linear_in_it() -> None:
    for name, words in HOSTILE.items():
        started = time.perf_counter()
        asked(words)
        assert time.perf_counter() - started < 3, name  # linear: ~10 ms; quadratic: minutes
