"""The spend limit holds within one request however many requests run at once (issue 50): each request holds what
it may cost from the moment the limit plans it until it is charged, so helpers started together share what is
left instead of each planning on half of all of it (was: four helpers $0.021-0.028 over a $0.09 limit, 1.5-2.1x the
largest request). And a limit on a server that reports no usage prices each call as the request went, its tools'
schemas included (was: $0.088 recorded for $0.198 of requests, with a runbook prompt and 14 tools).

Sub-agents in parallel through the real ``openai`` client over HTTP to the scripted server (which paces its
replies, so the helpers' requests overlap); the limit's planning driven with hypothesis across any number of
concurrent requests of any cost."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from typing import Any

import pytest
from agent_runtime import build_agent
from agent_runtime import messages as msgs
from agent_runtime.context.counter import TokenCounter
from agent_runtime.messages import text_of
from agent_runtime.models import OpenAIChatModel
from agent_runtime.models.prices import Prices
from agent_runtime.record import RunRecord, RunStatus
from agent_runtime.spend import SpendLimit, estimate_next, last_answer_cap, request_cap
from agent_runtime.subagents import SubagentSettings
from agent_runtime.testing import Paced, ScriptedRequest, ScriptedServer, calls, reply
from agent_runtime.tools import Tool
from agent_runtime.tools.decorator import external_tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.spend_support import GPT41, HELPER, Billing, forever, lookup, workflow

COUNTER = TokenCounter("gpt-4.1")


def billed_like_the_engine(body: dict[str, Any]) -> int:
    """A server that counts a request as the context engine does: its messages and its tools' schemas."""
    return COUNTER.messages(body["messages"]) + COUNTER.tools(body.get("tools", []))


def helpers_at_once(count: int, limit: float) -> tuple[RunRecord, Billing, list[ScriptedRequest]]:
    """A run that starts ``count`` helpers in one turn; each reads on and on, its replies paced (so the helpers'
    requests are under way together), until the run's limit stops it."""

    def script(request: ScriptedRequest) -> Any:
        if request.system_text().startswith(HELPER):
            return Paced(forever(request), interval=0.01)
        if request.tool_results():
            return reply("the helpers' findings, summed up")
        return calls(*[("subagent", {"task": f"look up part {n}"}) for n in range(count)])

    billing = Billing()
    base = replace(workflow(limit), subagents=SubagentSettings(enabled=True, max_tool_calls=60, max_tokens=10**8))
    with ScriptedServer([script] * 600, usage=billing, token_counter=billed_like_the_engine) as server:
        agent = build_agent(base, OpenAIChatModel("gpt-4.1", client=server.client()), tools=[lookup])
        record = agent.run("find out")
        return record, billing, list(server.requests)


def largest(billing: Billing) -> float:
    return max(GPT41.cost(usage) for usage in billing.billed)


def test_four_helpers_started_together_stay_within_one_request_of_the_limit() -> None:
    record, billing, requests = helpers_at_once(4, 0.09)
    by_helper: dict[str, list[int]] = {}
    for request in requests:
        if request.system_text().startswith(HELPER):
            task = next(text_of(m) for m in request.messages if m["role"] == "user")
            by_helper.setdefault(task, []).append(request.index)
    assert len(by_helper) == 4  # all four began before any asked again: their requests were planned at once
    assert max(indexes[0] for indexes in by_helper.values()) < min(indexes[1] for indexes in by_helper.values())
    assert billing.cost(GPT41) <= 0.09 + largest(billing), (billing.cost(GPT41), largest(billing))
    assert record.cost_usd() == pytest.approx(billing.cost(GPT41))  # what was billed is what is counted
    assert all(child["status"] == "cost_limit" for child in record.children)  # each stopped by the run's limit


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(count=st.integers(2, 6), limit=st.floats(0.03, 0.08))
def test_any_number_of_helpers_stay_within_one_request_of_the_limit(count: int, limit: float) -> None:
    record, billing, _ = helpers_at_once(count, limit)
    assert record.status in (RunStatus.COMPLETED, RunStatus.COST_LIMIT) and len(record.children) == count
    assert billing.cost(GPT41) <= limit + largest(billing), (count, billing.cost(GPT41), largest(billing))


# Any number of requests planned at once, any prompts, any replies up to their caps: each thread is one run's
# helper, planning its next request against the run's limit, then charged (as Agent.complete charges a call and
# releases what was held for it). The limit's estimate of each prompt is what the request then costs, so the sum
# stays within the limit itself (the promise is "give or take one request": estimates err, helpers compact).
helper_shape = st.lists(st.tuples(st.integers(0, 6_000), st.integers(0, 4_000), st.floats(0, 0.004)),
                        min_size=1, max_size=12)  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(helpers=st.lists(helper_shape, min_size=1, max_size=8), limit=st.floats(0.005, 0.2),
       prices=st.sampled_from([GPT41, Prices(0.15, 0.075, 0.60), Prices(15.0, 7.5, 60.0)]),
       cap=st.integers(256, 4096))  # fmt: skip
def test_the_limit_holds_for_any_requests_planned_at_once(
    helpers: list[list[tuple[int, int, float]]], limit: float, prices: Prices, cap: int
) -> None:
    root = RunRecord("run", "w", "gpt-4.1", prices=prices)
    root.ledger.limit = SpendLimit(per_run=limit)
    costs: list[float] = []
    start = threading.Barrier(len(helpers))

    def helper(turns: list[tuple[int, int, float]]) -> None:
        record = RunRecord("run.sub", "w", "gpt-4.1", prices=prices)
        record.ledger.parent = root.ledger
        messages = [msgs.system("You are a helper agent."), msgs.user("look it all up")]
        start.wait()
        for grown, wanted, pause in turns:
            allowed = request_cap(record, messages, cap)
            last = isinstance(allowed, str)
            allowed = last_answer_cap(record, messages, cap) if last else allowed
            if isinstance(allowed, str):
                return
            prompt = estimate_next(prices, record.model_calls, messages).prompt_tokens
            time.sleep(pause)  # the request under way: others plan meanwhile
            usage = {"prompt_tokens": prompt, "completion_tokens": min(wanted, allowed)}
            entry = record.add_call({"usage": usage | {"total_tokens": prompt + usage["completion_tokens"]}})
            record.ledger.release()
            costs.append(entry["cost_usd"])
            if last:
                return
            messages += [msgs.assistant("", [{"id": f"c{len(messages)}", "type": "function",
                                              "function": {"name": "lookup", "arguments": "{}"}}]),
                         msgs.tool_result(f"c{len(messages)}", "x" * 4 * grown)]  # fmt: skip

    threads = [threading.Thread(target=helper, args=(turns,)) for turns in helpers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    total = root.ledger.total()
    assert total == pytest.approx(sum(costs), abs=1e-9)
    assert total <= limit + 1e-9, (total, limit, max(costs or [0]))


def runbook_tools(count: int) -> list[Tool]:
    """Tools with schemas as wide as a runbook's (a description and a few documented parameters each)."""
    parameters = {"type": "object", "properties": {
        name: {"type": "string", "description": f"The {name} of the runbook step, as the runbook names it. " * 3}
        for name in ("service", "region", "ticket", "reason")}}  # fmt: skip
    return [external_tool(f"runbook_step_{n}", "Runs one step of the incident runbook. " * 8, parameters,
                          lambda arguments, ctx: "done: " + "ok " * 200) for n in range(count)]  # fmt: skip


def test_a_limit_without_usage_prices_each_call_with_its_tools() -> None:
    """Spend limit x a server that reports no usage x a workflow with many tools: each call is charged its
    messages and its tools' schemas, counted as the engine counts them, so what was recorded is what the requests
    cost (the server counts as the engine does) and the limit holds on it."""
    tools = [*runbook_tools(14), lookup]
    billing = Billing(report=None)
    base = replace(workflow(0.10), prompt="You follow the incident runbook. " + "Step: check, act, record. " * 150)
    with ScriptedServer([forever] * 400, usage=billing, token_counter=billed_like_the_engine) as server:
        record = build_agent(base, OpenAIChatModel("gpt-4.1", client=server.client()), tools=tools).run("go")
        assert "tools" in server.requests[0].body and len(server.requests[0].body["tools"]) >= 15
    answered = [c for c in record.model_calls if c.get("outcome") != "failed"]
    assert answered and all(c["usage_estimated"] == "no usage reported" for c in answered)
    assert record.status is RunStatus.COST_LIMIT
    # What the requests cost as sent (no usage: nothing says what the server cached, so neither side counts it).
    billed = sum(GPT41.cost(usage | {"cached_tokens": 0}) for usage in billing.billed)
    prompts = [c["usage"]["prompt_tokens"] for c in answered]
    assert prompts == [u["prompt_tokens"] for u in billing.billed]  # each prompt estimated as it went, tools in
    assert record.cost_usd() == pytest.approx(billed, rel=0.05)
    assert billed <= 0.10 + largest(billing)
