"""The streamed answer's invariant (issue 40, point 2), driven across shapes with hypothesis: whatever the model
says — text before tool calls or none, several calls, text in deltas of any size, flushes at any moment, answers
of any length, special mentions — the message Slack ends with is exactly what was said, model calls apart by a
blank line, and then the rest of the answer (its footer); no chunk is over 12,000 characters; nothing is
rewritten. Through slack_sdk's real WebClient over HTTP to the fake Slack API."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from agent_runtime.chat.mentions import neutralise
from agent_runtime.chat.stream import AnswerStream, forget
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk import WebClient

from tests.triggers_support import FakeApis, fake_apis

FOOTER = "\n\n_Answered by the ops workflow_"
WORDS = st.sampled_from(["word ", "line\n", "<!here> ", "<", "!", "``` ", "`code` ", "é ", "x" * 700, "\n\n"])


@pytest.fixture(scope="module")
def slack() -> Iterator[tuple[FakeApis, str]]:
    with fake_apis() as found:
        found[0].streams = True
        yield found


def sent(apis: FakeApis) -> tuple[str, list[int]]:
    texts = []
    for method in ("chat.startStream", "chat.appendStream", "chat.stopStream"):
        for body in apis.named(method):
            raw = body.get("chunks")
            parsed = json.loads(raw) if isinstance(raw, str) else raw or []
            texts += [c["text"] for c in parsed if c["type"] == "markdown_text"]
    return "".join(texts), [len(t) for t in texts]


call_shape = st.tuples(st.lists(st.lists(WORDS, max_size=6).map("".join), max_size=5), st.integers(0, 2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(call_shape, min_size=1, max_size=4), answer=st.lists(WORDS, max_size=40).map("".join),
       long=st.booleans(), ticks=st.lists(st.floats(0, 2), min_size=1, max_size=50))  # fmt: skip
def test_the_streamed_message_is_what_was_said_then_the_answer(
    slack: tuple[FakeApis, str], calls: list[tuple[list[str], int]], answer: str, long: bool, ticks: list[float]
) -> None:
    apis, url = slack
    apis.calls.clear()
    forget()
    steps = itertools.cycle(ticks)
    now = [0.0]

    def clock() -> float:  # time moves by the drawn steps: flushes land anywhere
        now[0] += next(steps)
        return now[0]

    stream = AnswerStream(WebClient(token="xoxb-test", base_url=url + "/"), channel="C1", thread_ts="1.0",
                          team="T1", user=None, clock=clock)  # fmt: skip
    answer = (answer + ("A very long report line.\n" * 1200 if long else "")) or "done"
    said: list[str] = []
    for deltas, tools in calls:  # earlier model calls: text (maybe), then tool calls (maybe)
        stream.new_call()
        for delta in deltas:
            stream.text(delta)
        said.append("".join(deltas))
        stream.settle(said[-1])  # the call answered: what it said counts
        for number in range(tools):
            stream.task(f"call-{len(said)}-{number}", "lookup", "in_progress")
            stream.task(f"call-{len(said)}-{number}", "lookup", "complete")
    stream.new_call()  # the last call writes the answer, in pieces
    for start in range(0, len(answer), 97):
        stream.text(answer[start : start + 97])
    stream.settle(answer)
    assert stream.finish(answer + FOOTER, None)
    text, sizes = sent(apis)
    expected = ""
    for part in [*said, answer]:  # each call's text after a blank line, once something was said
        expected += ("\n\n" if expected.strip() and part else "") + part
    assert text == neutralise(expected + FOOTER)
    assert max(sizes) <= 12_000
    assert "<!here>" not in text.replace("```", "\0").split("\0")[0]  # outside the first fence, never a mention
    assert not apis.named("chat.update") and len(apis.named("chat.stopStream")) == 1


def joined(parts: list[str]) -> str:
    """The calls' texts as the message says them: each after a blank line, once something was said."""
    text = ""
    for part in parts:
        text += ("\n\n" if text.strip() and part else "") + part
    return text


# A model call: its failed attempts' texts (each cut after some deltas, then retried), the text of the attempt that
# answered, and its tool calls.
attempts = st.lists(st.lists(WORDS, max_size=6).map("".join), max_size=5)
counted_call = st.tuples(st.lists(attempts, max_size=2), attempts, st.integers(0, 2))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(calls=st.lists(counted_call, min_size=1, max_size=3), last=counted_call, cut=st.booleans(),
       ticks=st.lists(st.floats(0, 2), min_size=1, max_size=50))  # fmt: skip
def test_the_message_shows_only_what_counted_whatever_failed_or_was_cut(
    slack: tuple[FakeApis, str],
    calls: list[tuple[list[list[str]], list[str], int]],
    last: tuple[list[list[str]], list[str], int],
    cut: bool,
    ticks: list[float],
) -> None:
    """Any model calls, each with failed attempts before the one that answered, then a last call that answers or
    is cut short (the deadline): the thread ends with one message, exactly the text of the attempts that counted
    (then the answer's footer), or none when nothing counted. Driven through AnswerStreamHook, as the loop calls
    it: each attempt's progress (its number, its deltas), the call's response, its tool calls, the run's end."""
    from agent_runtime.models import ModelResponse, ToolCall
    from agent_runtime.models.stream import Progress
    from agent_runtime.record import RunRecord, RunStatus
    from agent_runtime.service.progress import AnswerStreamHook
    from agent_runtime.tools import ToolOutcome

    from tests.slack_support import thread

    apis, url = slack
    with apis.lock:
        apis.calls.clear()
        apis._ts = 0  # the thread's messages are numbered from here
    forget()
    steps = itertools.cycle(ticks)
    now = [0.0]

    def clock() -> float:
        now[0] += next(steps)
        return now[0]

    stream = AnswerStream(WebClient(token="xoxb-test", base_url=url + "/"), channel="C1", thread_ts="1.0",
                          team="T1", user=None, clock=clock)  # fmt: skip
    hook, run = AnswerStreamHook(stream), SimpleNamespace(record=RunRecord("run", "w", "m"))
    counted: list[str] = []
    cards = 0
    for number, (failed, answered, tools) in enumerate([*calls, last]):
        hook.before_model_call(run, [])
        for attempt, deltas in enumerate([*failed, answered], 1):
            for delta in deltas:
                hook.on_model_progress(run, Progress(0.0, 1, 0, delta=delta, attempt=attempt))
        if cut and number == len(calls):  # the deadline closes the last call: it never answers
            break
        counted.append("".join(answered))
        hook.after_model_call(run, ModelResponse(text=counted[-1] or None))
        for card in range(tools):
            tool_call = ToolCall(f"call-{number}-{card}", "lookup", "{}")
            hook.before_tool_call(run, tool_call)
            hook.on_tool_result(run, ToolOutcome(tool_call, "found"))
            cards += 1
    run.record.status = RunStatus.SUSPENDED if cut else RunStatus.COMPLETED
    hook.on_run_end(run)
    if cut:
        expected = joined(counted)
    else:
        assert stream.finish(counted[-1] + FOOTER, None)
        expected = joined([*counted[:-1], counted[-1] + FOOTER])
    shown = list(thread(apis).values())
    assert shown == ([] if not expected and not cards else [neutralise(expected)]), (shown, expected)
    assert max(sent(apis)[1] or [0]) <= 12_000
