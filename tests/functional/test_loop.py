"""The agent loop end to end: real openai client, scripted server over HTTP, real tools."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
from agent_runtime import Deadline, Hook, Run, RunContext, RunState, RunStatus, ToolError, tool
from agent_runtime import messages as m
from agent_runtime.messages import find_orphans
from agent_runtime.models import ContextLengthExceededError, ModelResponse
from agent_runtime.testing import ScriptedRequest, ScriptedServer, call, calls, context_overflow, reply

from tests.conftest import make_agent

Start = Callable[..., ScriptedServer]


@tool
def lookup(key: str) -> str:
    """Look up a value.

    Args:
        key: What to look up.
    """
    return {"answer": "42"}.get(key, "unknown")


@tool
def explode(reason: str) -> str:
    """Fails on purpose.

    Args:
        reason: Why.
    """
    raise ToolError(f"cannot do that: {reason}")


@tool
def buggy() -> str:
    """Has a bug."""
    return str(1 / 0)


def _results(request: ScriptedRequest) -> list[str]:
    return list(request.tool_results().values())


def test_final_answer_without_tools(scripted: Start) -> None:
    server = scripted(reply("Hello!"))
    record = make_agent(server).run("hi")
    assert record.status is RunStatus.COMPLETED
    assert record.final_answer == "Hello!"
    assert [msg["role"] for msg in server.requests[0].messages] == ["system", "user"]


def test_tool_round_trip_and_run_record(scripted: Start) -> None:
    server = scripted(call("lookup", {"key": "answer"}), lambda r: reply(f"It is {_results(r)[0]}."))
    record = make_agent(server, tools=[lookup]).run("what is the answer?")
    assert record.final_answer == "It is 42."
    assert [tool["function"]["name"] for tool in server.requests[0].body["tools"]] == ["lookup"]
    data = record.to_dict()
    assert data["status"] == "completed" and data["run_id"].startswith("run-")
    assert [c["turn"] for c in data["model_calls"]] == [1, 2]
    assert all(c["usage"]["prompt_tokens"] > 0 for c in data["model_calls"])
    assert data["usage"]["total_tokens"] == sum(c["usage"]["total_tokens"] for c in data["model_calls"])
    assert data["tool_calls"][0] | {"duration_ms": 0} == {
        "turn": 1,
        "executed": True,
        "id": data["tool_calls"][0]["id"],
        "name": "lookup",
        "is_error": False,
        "mutating": False,
        "duration_ms": 0,
    }
    assert [e["type"] for e in data["events"]] == ["run_started", "completed"]
    assert "messages" not in data  # the record never carries payloads


def test_tool_errors_and_invalid_json_reach_the_model(scripted: Start) -> None:
    seen: list[list[str]] = []

    def answer(request: ScriptedRequest):
        seen.append(_results(request))
        return reply("I could not do it.")

    server = scripted(
        calls(("explode", {"reason": "policy"}), ("lookup", '{"key": "answer"'), ("buggy", {}), ("missing", {})),
        answer,
    )
    record = make_agent(server, tools=[lookup, explode, buggy]).run("try things")
    assert record.status is RunStatus.COMPLETED
    [results] = seen
    assert results[0] == "ERROR: cannot do that: policy"
    assert results[1].startswith("ERROR: the arguments are not valid JSON")
    assert results[2] == "ERROR: tool 'buggy' failed: ZeroDivisionError: division by zero"
    assert results[3].startswith("ERROR: there is no tool named 'missing'")
    assert [c["is_error"] for c in record.tool_calls] == [True, True, True, True]


def test_tool_call_cap_ends_with_a_last_answer_and_no_orphans(scripted: Start) -> None:
    def last(request: ScriptedRequest):
        assert request.body["tool_choice"] == "none" and request.tool_names  # tools offered, none callable
        assert "limit of 2 tool calls (limits.max_tool_calls) is reached" in m.text_of(request.messages[-1])
        return reply("b is unknown; c was not looked up")

    server = scripted(call("lookup", {"key": "a"}), calls(("lookup", {"key": "b"}), ("lookup", {"key": "c"})), last)
    record = make_agent(server, tools=[lookup], max_tool_calls=2).run("loop forever")
    assert record.status is RunStatus.TOOL_CALL_LIMIT
    assert record.stop_reason is not None and "allows 2 tool calls (limits.max_tool_calls)" in record.stop_reason
    assert record.final_answer == "b is unknown; c was not looked up"
    assert [c["executed"] for c in record.tool_calls] == [True, True, False]
    assert record.state is not None and find_orphans(record.state.messages) == []
    assert record.state.messages[-2]["content"].startswith("ERROR: not run: the workflow's limit of 2 tool calls")
    assert record.state.messages[-1] == {"role": "assistant", "content": "b is unknown; c was not looked up"}


def test_zero_tool_calls_allowed_refuses_every_call(scripted: Start) -> None:
    server = scripted(call("lookup", {"key": "a"}), reply("cannot look anything up"))
    record = make_agent(server, tools=[lookup], max_tool_calls=0).run("go")
    assert record.status is RunStatus.TOOL_CALL_LIMIT and record.tool_calls[0]["executed"] is False
    assert record.final_answer == "cannot look anything up"


def test_the_status_tells_the_model_how_many_tool_calls_are_left(scripted: Start) -> None:
    from agent_runtime.context import ContextEngine
    from agent_runtime.tools import ToolRegistry

    server = scripted(call("lookup", {"key": "a"}), reply("done"))
    agent = make_agent(server, tools=[lookup], max_tool_calls=5)
    agent.hooks.hooks.append(ContextEngine(agent.workflow, ToolRegistry([lookup])))
    agent.run("go")
    statuses = [r.status_text() for r in server.requests]
    assert "tool calls: 0 used of 5, 5 left" in statuses[0] and "tool calls: 1 used of 5, 4 left" in statuses[1]


def test_deadline_suspends_before_calling_the_model(scripted: Start) -> None:
    server = scripted()
    record = make_agent(server).run("hi", deadline=Deadline.after(0))
    assert record.status is RunStatus.SUSPENDED
    assert "before the next model call" in (record.stop_reason or "")
    assert server.requests == []


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_deadline_mid_batch_suspends_and_resume_finishes_the_batch(scripted: Start) -> None:
    clock = _Clock()
    ran: list[str] = []

    @tool(mutating=True)
    def act(name: str) -> str:
        """A mutating step (runs alone, in order).

        Args:
            name: Step name.
        """
        ran.append(name)
        clock.now += 10
        return f"did {name}"

    def final(request: ScriptedRequest):
        return reply(" / ".join(_results(request)))

    server = scripted(calls(("act", {"name": "one"}), ("act", {"name": "two"}), ("act", {"name": "three"})), final)
    agent = make_agent(server, tools=[act])
    first = agent.run("do three things", deadline=Deadline.after(15, clock=clock))
    assert first.status is RunStatus.SUSPENDED and ran == ["one", "two"]
    assert "1 tool call(s) pending" in (first.stop_reason or "")
    assert first.state is not None and len(m.pending_tool_calls(first.state.messages)) == 1

    # A new invocation (as after a re-enqueue) picks up the JSON state.
    state = RunState.from_dict(first.state.to_dict())
    second = agent.run(state=state, deadline=Deadline.after(100, clock=clock))
    assert second.status is RunStatus.COMPLETED and ran == ["one", "two", "three"]
    assert second.final_answer == "did one / did two / did three"
    assert second.run_id == first.run_id


def test_deadline_reached_during_the_model_call_suspends(scripted: Start) -> None:
    def slow(request: ScriptedRequest):
        time.sleep(0.5)
        return reply("too late")

    server = scripted(slow)
    record = make_agent(server).run("hi", deadline=Deadline.after(0.2))
    assert record.status is RunStatus.SUSPENDED
    assert record.stop_reason == "the deadline was reached during a model call"
    assert record.state is not None and record.state.messages[-1]["role"] == "user"


def test_model_failure_ends_the_run_with_a_clear_reason(scripted: Start) -> None:
    from agent_runtime.testing import server_error

    server = scripted(*[server_error(500)] * 3)
    record = make_agent(server).run("hi")
    assert record.status is RunStatus.FAILED
    assert "failed after 3 attempt(s): HTTP 500" in (record.stop_reason or "")
    assert record.events[-1]["type"] == "failed"


class Shrinker(Hook):
    """Stands in for the context engine: on overflow, drop the bulky message and retry."""

    def __init__(self) -> None:
        self.calls = 0

    def on_context_overflow(self, run: Run, error: ContextLengthExceededError) -> bool:
        self.calls += 1
        run.state.messages[:] = [msg for msg in run.state.messages if "BULK" not in m.text_of(msg)]
        run.state.messages.append(m.user("(a large message was removed)"))
        return True


def test_context_overflow_lets_a_hook_shrink_and_retry_once(scripted: Start) -> None:
    server = scripted(context_overflow(), reply("fits now"))
    shrinker = Shrinker()
    record = make_agent(server, hooks=[shrinker]).run("BULK " * 100)
    assert record.final_answer == "fits now" and shrinker.calls == 1
    assert "BULK" not in str(server.requests[1].messages)
    assert [e["type"] for e in record.events].count("context_overflow") == 1


def test_unhandled_context_overflow_fails_the_run(scripted: Start) -> None:
    server = scripted(context_overflow())
    record = make_agent(server).run("hi")
    assert record.status is RunStatus.FAILED
    assert "context window" in (record.stop_reason or "")


def test_overflow_retries_are_bounded(scripted: Start) -> None:
    server = scripted(*[context_overflow()] * 4)  # a hook that shrinks and shrinks, and a server that never fits
    record = make_agent(server, hooks=[Shrinker()]).run("BULK")
    assert record.status is RunStatus.FAILED
    assert [e["retried"] for e in record.events if e["type"] == "context_overflow"] == [False, True, True, True]


class Recorder(Hook):
    def __init__(self) -> None:
        self.events: list[str] = []

    def on_run_start(self, run: Run) -> None:
        self.events.append("start")

    def before_model_call(self, run: Run, messages: list[m.Message]) -> list[m.Message]:
        self.events.append("before")
        return [*messages, m.system("status: tail")]  # sent, but never written into history

    def after_model_call(self, run: Run, response: ModelResponse) -> None:
        self.events.append("after")

    def on_tool_result(self, run, outcome):
        self.events.append("tool")
        return outcome

    def after_step(self, run: Run) -> None:
        self.events.append("step")

    def on_run_end(self, run: Run) -> None:
        self.events.append("end")


def test_hooks_fire_in_order_and_transform_only_the_outgoing_request(scripted: Start) -> None:
    server = scripted(call("lookup", {"key": "answer"}), reply("done"))
    recorder = Recorder()
    record = make_agent(server, tools=[lookup], hooks=[recorder]).run("go")
    assert recorder.events == ["start", "before", "after", "tool", "step", "before", "after", "step", "end"]
    assert server.requests[1].messages[-1] == m.system("status: tail")
    assert record.state is not None and m.system("status: tail") not in record.state.messages


def test_read_only_calls_run_in_parallel(scripted: Start) -> None:
    barrier = threading.Barrier(3, timeout=5)

    @tool
    def wait(n: int) -> str:
        """Wait for the others.

        Args:
            n: Which one.
        """
        barrier.wait()  # only returns if all three run at the same time
        return str(n)

    server = scripted(
        calls(("wait", {"n": 1}), ("wait", {"n": 2}), ("wait", {"n": 3})), lambda r: reply(",".join(_results(r)))
    )
    record = make_agent(server, tools=[wait]).run("go")
    assert record.final_answer == "1,2,3"  # results keep the call order


def test_tools_receive_the_run_context(scripted: Start) -> None:
    @tool
    def whoami(ctx: RunContext) -> str:
        """Say which run this is."""
        return f"{ctx.workflow}/{ctx.run_id}"

    server = scripted(call("whoami"), lambda r: reply(_results(r)[0]))
    record = make_agent(server, tools=[whoami]).run("who?")
    assert record.final_answer == f"test-flow/{record.run_id}"


def test_a_thread_continues_from_saved_state(scripted: Start) -> None:
    server = scripted(reply("first"), lambda r: reply(f"seen {len(r.messages)} messages"))
    agent = make_agent(server)
    first = agent.run("one")
    second = agent.run("two", state=first.state)
    assert second.final_answer == "seen 4 messages"
    assert [msg["role"] for msg in server.requests[1].messages] == ["system", "user", "assistant", "user"]


def test_a_run_needs_a_message(scripted: Start) -> None:
    from agent_runtime import ConfigError

    with pytest.raises(ConfigError, match="needs a user message"):
        make_agent(scripted()).run()


def test_a_tool_call_cut_off_at_the_output_limit_is_not_run_and_the_history_stays_parseable(scripted: Start) -> None:
    """Was: the broken '{"' stayed in the history, and llama.cpp answered every later request with a 500."""
    import json

    from agent_runtime.testing import Reply, ScriptedCall

    cut = Reply(calls=(ScriptedCall("lookup", {"key": "a"}), ScriptedCall("lookup", '{"ke')), finish_reason="length")
    seen: list = []

    def after(request: ScriptedRequest):
        for message in request.messages:  # what a server that rebuilds the prompt must parse
            for tool_call in message.get("tool_calls", []):
                json.loads(tool_call["function"]["arguments"])
        seen.append(list(request.tool_results().values()))
        return reply("done")

    server = scripted(cut, after)
    record = make_agent(server, tools=[lookup]).run("go")
    assert record.status is RunStatus.COMPLETED
    assert all(result.startswith("ERROR: not run: your reply was cut off at the output limit") for result in seen[0])
    assert not any(c["name"] == "lookup" and not c["is_error"] for c in record.tool_calls)  # neither call ran
    assert [c["executed"] for c in record.tool_calls] == [False, False]  # and neither counts against the cap
    assert record.state is not None and record.state.tool_calls_used == 0


def test_cut_off_calls_never_use_up_the_cap_and_a_model_that_only_writes_them_is_stopped(scripted: Start) -> None:
    """Was: jira-triage stopped at max_tool_calls with 29 calls recorded and none run. With a cap of 2, two turns
    of cut-off calls leave the cap untouched and a third turn's call runs; three cut-off turns in a row end the
    run with the reason (every call answered: the thread stays usable)."""
    from agent_runtime.testing import Reply, ScriptedCall

    def cut() -> Reply:
        return Reply(calls=(ScriptedCall("lookup", '{"ke'), ScriptedCall("lookup", '{"k')), finish_reason="length")

    server = scripted(cut(), cut(), call("lookup", {"key": "answer"}), reply("42"))
    record = make_agent(server, tools=[lookup], max_tool_calls=2).run("go")
    assert record.status is RunStatus.COMPLETED and record.final_answer == "42"
    assert [c["executed"] for c in record.tool_calls] == [False] * 4 + [True]
    assert record.state is not None and record.state.tool_calls_used == 1

    server = scripted(cut(), cut(), cut())
    record = make_agent(server, tools=[lookup], max_tool_calls=2).run("go")
    assert record.status is RunStatus.FAILED
    assert record.stop_reason is not None and "could not run 3 turns in a row" in record.stop_reason
    assert record.state is not None and not find_orphans(record.state.messages)


def test_invalid_json_arguments_are_stored_as_an_empty_object_and_answered_with_the_error(scripted: Start) -> None:
    def after(request: ScriptedRequest):
        [assistant] = [m for m in request.messages if m.get("tool_calls")]
        assert assistant["tool_calls"][0]["function"]["arguments"] == "{}"
        [result] = request.tool_results().values()
        assert result.startswith("ERROR: the arguments are not valid JSON") and result.endswith("(it was not run)")
        return reply("ok")

    server = scripted(call("lookup", '{"key": '), after)
    assert make_agent(server, tools=[lookup]).run("go").status is RunStatus.COMPLETED


def test_an_answer_cut_off_at_the_output_limit_is_marked(scripted: Start) -> None:
    from agent_runtime.testing import Reply

    server = scripted(Reply(text="The first half of", finish_reason="length"))
    record = make_agent(server).run("go")
    assert record.status is RunStatus.COMPLETED and record.final_answer == "The first half of"
    assert record.stop_reason == "the answer was cut off at the output limit (model.max_output_tokens)"
    assert any(e["type"] == "answer_truncated" for e in record.events)


def test_an_answer_the_server_cut_short_of_the_cap_is_not_blamed_on_the_cap(scripted: Start) -> None:
    """Was: a reply cut short because the server's context ran out was blamed on model.max_output_tokens."""
    from agent_runtime.testing import Reply

    server = scripted(Reply(text="The first half of", finish_reason="length", completion_tokens=300))
    record = make_agent(server).run("go")
    assert record.status is RunStatus.COMPLETED and record.stop_reason is not None
    assert record.stop_reason.startswith("the answer was cut off by the server after 300 tokens, below the output ")
    assert "limit of 1,024: its context window was full" in record.stop_reason


def test_cached_and_uncached_input_and_the_run_s_cost_are_recorded(scripted) -> None:
    """Per call the cached prompt tokens (usage.prompt_tokens_details); per run an estimate at the model's prices
    (the workflow's own model.prices win); the trace's last line says both."""
    import io
    from dataclasses import replace

    from agent_runtime.models.prices import Prices
    from agent_runtime.runtime import build_agent
    from agent_runtime.trace import TraceHook

    from tests.conftest import make_workflow, model_for

    long_prompt = "You review designs. " + "Keep every rule in mind. " * 300  # a cacheable prefix
    server = scripted(*[call("file_regex", {"id": "file-x", "pattern": "x"}) for _ in range(3)], reply("done"))
    flow = make_workflow(prompt=long_prompt)
    flow = replace(flow, model=replace(flow.model, name="gpt-4o", prices=Prices(2.0, 0.5, 8.0)))
    trace = io.StringIO()
    record = build_agent(flow, model_for(server), hooks=[TraceHook(trace)]).run("go")
    cached = [c["usage"]["cached_tokens"] for c in record.model_calls]
    assert cached[0] == 0 and all(n > 0 for n in cached[1:])  # the prefix repeats from the second call on
    usage = record.usage_totals()
    expected = ((usage["prompt_tokens"] - usage["cached_tokens"]) * 2.0 + usage["cached_tokens"] * 0.5
                + usage["completion_tokens"] * 8.0) / 1e6  # fmt: skip
    assert record.to_dict()["cost_usd"] == round(expected, 6)
    assert "cached ·" in trace.getvalue() and "of input cached) · ~$" in trace.getvalue().splitlines()[-1]
