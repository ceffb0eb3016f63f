"""One ledger for everything a run causes (issue 40, point 1), tested where the spend limit meets the features it
shares state with: sub-agents, endpoints that report no usage (or refuse ``stream_options``, or report nonsense),
a run resumed after the deadline, ``AGENT_MODEL`` with the workflow's prices. Each through the real ``openai``
client over HTTP to the scripted server.

The invariant: the run's reported cost is the sum of what the endpoint billed, priced at the model's prices —
every call counted once, helpers' and compaction's included — and, where the endpoint says nothing, an estimate
that still stops the run at its limit."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import pytest
from agent_runtime import Services, build_agent
from agent_runtime.config import RuntimeConfig
from agent_runtime.deadline import Deadline
from agent_runtime.models import OpenAIChatModel
from agent_runtime.models.prices import Prices, prices_for, unpriced_warning
from agent_runtime.record import RunRecord, RunStatus
from agent_runtime.runtime import deployed
from agent_runtime.spend import SPENT
from agent_runtime.stores import LocalStore, ThreadStore
from agent_runtime.subagents import SubagentSettings
from agent_runtime.testing import Fail, ScriptedRequest, ScriptedServer, call, reply
from agent_runtime.tools import tool
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.spend_support import GPT41, HELPER, Billing, forever, lookup, workflow


def all_calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    """A run's model calls and its helpers', depth first."""
    return [*record["model_calls"], *(c for child in record["children"] for c in all_calls(child))]


def test_a_helpers_calls_are_charged_to_the_run_as_they_happen_and_stopped_by_its_limit() -> None:
    """Sub-agent x spend limit: a helper that never stops reading is stopped by its parent's limit, the parent's
    record carries every call at its price (the helper's share apart), and the total is what was billed."""

    def script(request: ScriptedRequest) -> Any:
        if request.system_text().startswith(HELPER):
            return forever(request)  # the helper reads on and on
        if request.tool_results():
            return reply("the helper's findings, summed up")
        return call("subagent", {"task": "look everything up"})

    billing = Billing()
    base = workflow(0.10)
    base = replace(base, subagents=SubagentSettings(enabled=True, max_tool_calls=400, max_tokens=10_000_000))
    with ScriptedServer([script] * 400, usage=billing) as server:
        agent = build_agent(base, OpenAIChatModel("gpt-4.1", client=server.client()), tools=[lookup])
        record = agent.run("find out")
    data = record.to_dict()
    assert record.final_answer == "the helper's findings, summed up"
    [child] = data["children"]
    assert child["status"] == "cost_limit"  # the helper stopped at the run's limit, not at its own
    assert record.cost_usd() == pytest.approx(billing.cost(GPT41))  # every call billed is counted, once
    assert sum(c["cost_usd"] for c in all_calls(data)) == pytest.approx(billing.cost(GPT41))
    assert data["cost"]["helpers"] == pytest.approx(child["cost_usd"], abs=1e-6)
    assert data["cost_usd"] == pytest.approx(data["cost"]["run"] + data["cost"]["helpers"], abs=1e-5)
    largest = max(GPT41.cost({"prompt_tokens": u["prompt_tokens"], "completion_tokens": 1024}) for u in billing.billed)
    assert (record.cost_usd() or 0) <= 0.10 + largest  # at its limit, give or take one request


@pytest.mark.parametrize("endpoint", ["no usage", "refuses stream_options"])
def test_a_limit_holds_against_an_endpoint_that_reports_no_usage(endpoint: str) -> None:
    """Spend limit x an endpoint without usage: each call is charged an estimate (marked so), and the $0.10
    limit stops the run within a request of what the endpoint would have billed (was: 33 requests, $0 recorded)."""
    billing = Billing(report=None if endpoint == "no usage" else True)

    def script(request: ScriptedRequest) -> Any:
        if "stream_options" in request.body and endpoint == "refuses stream_options":
            return Fail(400, "Unrecognized request argument supplied: stream_options")
        return forever(request)

    with ScriptedServer([script] * 400, usage=billing) as server:
        agent = build_agent(workflow(0.10), OpenAIChatModel("gpt-4.1", client=server.client()), tools=[lookup])
        record = agent.run("look everything up")
    assert record.status is RunStatus.COST_LIMIT
    assert record.final_answer == "stopped at the limit: looked up what I could"
    answered = [c for c in record.model_calls if c.get("outcome") != "failed"]
    assert answered and all(c["usage_estimated"] == "no usage reported" for c in answered)
    assert (record.cost_usd() or 0) <= 0.10
    largest = max(GPT41.cost({"prompt_tokens": u["prompt_tokens"], "completion_tokens": 1024}) for u in billing.billed)
    assert billing.cost(GPT41) <= 0.10 + largest  # what it really cost: at the limit, give or take one request
    assert record.to_dict()["cost"]["estimated"] == pytest.approx(record.cost_usd(), abs=1e-6)


BROKEN = st.sampled_from(["negative", "fraction", "text", "cached over prompt", "missing"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kinds=st.lists(st.one_of(st.just("valid"), BROKEN), min_size=1, max_size=6))
def test_the_cost_is_what_was_billed_and_estimates_replace_nonsense(kinds: list[str]) -> None:
    """Whatever each call reports — valid usage, negative or fractional counts, text, cached above the prompt,
    nothing — the run completes, the valid calls cost exactly what was billed and the others are estimated (never
    negative, never zero for a reply that said something)."""
    turns = iter(kinds)

    def broken(usage: dict[str, Any]) -> Any:
        kind = next(turns, "valid")
        changed = {
            "valid": usage,
            "negative": usage | {"prompt_tokens": -5000, "completion_tokens": -3},
            "fraction": usage | {"prompt_tokens": 120.5},
            "text": usage | {"completion_tokens": "many"},
            "cached over prompt": usage | {"prompt_tokens_details": {"cached_tokens": usage["prompt_tokens"] + 9}},
        }
        return changed.get(kind)

    script = [call("lookup", {"key": f"k{i}"}) for i in range(len(kinds) - 1)] + [reply("done")]
    with ScriptedServer(script, usage=broken) as server:
        agent = build_agent(workflow(), OpenAIChatModel("gpt-4.1", client=server.client()), tools=[lookup])
        record = agent.run("look up")
    assert record.status is RunStatus.COMPLETED
    valid = [c for c, kind in zip(record.model_calls, kinds, strict=True) if kind == "valid"]
    estimated = [c for c, kind in zip(record.model_calls, kinds, strict=True) if kind != "valid"]
    assert all("usage_estimated" not in c for c in valid)
    assert all(c["usage_estimated"] in ("no usage reported", "usage not valid") for c in estimated)
    assert all(c["cost_usd"] > 0 for c in record.model_calls)
    assert record.cost_usd() == pytest.approx(sum(c["cost_usd"] for c in record.model_calls))
    assert record.usage_totals()["prompt_tokens"] >= 0


def test_a_run_resumed_after_the_deadline_keeps_counting_from_what_it_spent() -> None:
    """Spend limit x a run resumed after the deadline: each invocation starts its ledger where the last stopped,
    so the limit holds for the run, not per invocation (was: a fresh $0 after every resume)."""

    @tool
    def slow(key: str) -> str:
        """Look a key up, slowly.

        Args:
            key: The key.
        """
        time.sleep(0.05)
        return f"{key}: " + "lorem ipsum " * 150

    def looping(request: ScriptedRequest) -> Any:
        if request.body.get("tool_choice") == "none":
            return reply("stopped at the limit")
        return call("slow", {"key": f"k{request.index}"})

    billing = Billing()
    records: list[RunRecord] = []
    with ScriptedServer([looping] * 400, usage=billing) as server:
        agent = build_agent(workflow(0.08), OpenAIChatModel("gpt-4.1", client=server.client()), tools=[slow])
        record = agent.run("look everything up", deadline=Deadline.after(0.4))
        records.append(record)
        while record.status is RunStatus.SUSPENDED and len(records) < 50:
            record = agent.run(state=record.state, deadline=Deadline.after(0.4), run_id=record.run_id)
            records.append(record)
    assert len(records) > 2 and record.status is RunStatus.COST_LIMIT
    # The last invocation's total is the run's: what was billed, give or take a call the deadline cut short
    # (charged as an estimate: the prompt, counted, and what had arrived).
    largest = max(GPT41.cost({"prompt_tokens": u["prompt_tokens"], "completion_tokens": 1024}) for u in billing.billed)
    assert abs((record.cost_usd() or 0) - billing.cost(GPT41)) <= largest
    assert (record.cost_usd() or 0) <= 0.08
    own = [sum(c.get("cost_usd") or 0.0 for c in r.model_calls) for r in records]  # a failed attempt: no cost
    assert record.cost_usd() == pytest.approx(sum(own))
    assert record.state is not None and SPENT.get(record.state.context)["run"] == pytest.approx(sum(own), abs=1e-6)


def test_agent_model_runs_at_the_workflows_prices() -> None:
    """AGENT_MODEL x prices: model.prices are the prices of the model the workflow runs on (was: dropped with the
    name, so a limit on a self-hosted model could not be set at all)."""
    prices = {"input": 1.0, "cached_input": 0.5, "output": 2.0}
    base = workflow(0.05, name="my-local", prices=prices)
    config = replace(RuntimeConfig.from_env(), model_override="gemma-3-270m")
    local = deployed(base, config)
    assert local.model.name == "gemma-3-270m" and local.model.prices == Prices(1.0, 0.5, 2.0)
    billing = Billing()
    with ScriptedServer([forever] * 200, usage=billing) as server:
        record = build_agent(local, OpenAIChatModel("gemma-3-270m", client=server.client()), tools=[lookup]).run("go")
    assert record.status is RunStatus.COST_LIMIT and record.model == "gemma-3-270m"
    assert record.cost_usd() == pytest.approx(billing.cost(Prices(1.0, 0.5, 2.0)))


def test_a_misspelt_model_has_no_price_and_a_snapshot_prices_like_its_family() -> None:
    assert prices_for("gpt-4.1-mnii") is None  # was: priced as gpt-4.1 by prefix
    assert prices_for("gpt-4.1-2025-04-14") == prices_for("gpt-4.1")
    assert prices_for("gpt-4.1-mini") != prices_for("gpt-4.1")
    warning = unpriced_warning("gpt-4.1-mnii")
    assert warning is not None and "no known price" in warning and "model.prices" in warning
    assert unpriced_warning("gpt-4.1") is None
    assert unpriced_warning("my-local", Prices(0, 0, 0)) is None


def test_a_small_limit_shrinks_the_reply_cap_instead_of_refusing_the_run() -> None:
    """The reservation is what the run can need: a $0.03 limit on gpt-4.1 with a 4,096-token cap (was: stopped
    before its first call, "$0.0000 spent") asks with a smaller cap and answers."""
    with ScriptedServer([call("lookup", {"key": "a"}), reply("found a")]) as server:
        base = workflow(0.03, max_output_tokens=4096)
        record = build_agent(base, OpenAIChatModel("gpt-4.1", client=server.client()), tools=[lookup]).run("go")
        caps = [r.body.get("max_completion_tokens") or r.body.get("max_tokens") for r in server.requests]
    assert record.status is RunStatus.COMPLETED and record.final_answer == "found a"
    assert all(isinstance(cap, int) and 256 <= cap < 4096 for cap in caps)


def test_when_not_even_a_last_answer_fits_the_reason_says_what_was_needed() -> None:
    with ScriptedServer([]) as server:
        base = workflow(0.0001)
        record = build_agent(base, OpenAIChatModel("gpt-4.1", client=server.client())).run("x " * 4000)
        assert server.requests == []
    reason = record.stop_reason or ""
    assert record.status is RunStatus.COST_LIMIT and "not even a last answer fits" in reason
    assert "prompt tokens" in reason and "--max-cost" in reason


def test_a_grant_is_applied_once_per_decision(tmp_path: Any) -> None:
    """An approver's "continue with $5 more" redelivered (the worker died before its checkpoint) raises the day's
    limit once (was: $5 became $10)."""
    threads = ThreadStore(LocalStore(tmp_path))
    assert threads.raise_spend("T-1", "2026-11-26", 5.0, "U1", key="run-a") == 5.0
    assert threads.raise_spend("T-1", "2026-11-26", 5.0, "U1", key="run-a") == 5.0  # the same message again
    assert threads.spend_raised("T-1", "2026-11-26") == 5.0
    assert threads.raise_spend("T-1", "2026-11-26", 2.0, "U1", key="run-b") == 7.0  # another decision adds
    assert threads.spend_raised("T-1", "2026-11-27") == 0.0


def test_what_a_run_spent_before_an_approval_wait_counts_after_it() -> None:
    """Spend limit x an approval wait: a run that waits for a person (another invocation resumes it) keeps what
    it spent, so its limit holds across the wait."""
    from agent_runtime.approvals import Decision

    @tool(mutating=True)
    def restart(service: str) -> str:
        """Restart a service.

        Args:
            service: Its name.
        """
        return f"restarted {service}"

    class Later:
        def __init__(self, decision: Decision) -> None:
            self.decision = decision

        def decide(self, request: Any) -> tuple[Decision, str | None]:
            return self.decision, None if self.decision is Decision.PENDING else "U0LEAD"

    def model(request: ScriptedRequest) -> Any:
        if request.body.get("tool_choice") == "none":
            return reply("stopped at the limit")
        done = any("restarted" in text for text in request.tool_results().values())
        return call("lookup", {"key": f"k{request.index}"}) if done else call("restart", {"service": "payments"})

    base, asked = workflow(0.06), replace(restart, approval="always")
    billing = Billing()
    with ScriptedServer([model] * 200, usage=billing) as server:
        client = OpenAIChatModel("gpt-4.1", client=server.client())
        waiting = build_agent(base, client, Services(approver=Later(Decision.PENDING)), tools=[lookup, asked]).run(
            "restart"
        )
        assert waiting.status is RunStatus.AWAITING_APPROVAL and (waiting.cost_usd() or 0) > 0
        resumed = build_agent(base, client, Services(approver=Later(Decision.APPROVED)), tools=[lookup, asked])
        record = resumed.run(state=waiting.state, run_id=waiting.run_id)
    assert record.status is RunStatus.COST_LIMIT
    assert record.cost_usd() == pytest.approx(billing.cost(GPT41))  # both invocations, one ledger
    assert (record.cost_usd() or 0) <= 0.06


def test_an_answer_cut_at_the_cap_the_limit_left_says_so() -> None:
    """The reply cap shrank to what the limit allows: an answer cut off there names the spend limit, not the
    server's window."""
    from agent_runtime.testing import Reply

    with ScriptedServer([Reply(text="a long answer, cut", finish_reason="length")]) as server:
        base = workflow(0.03, max_output_tokens=4096)
        record = build_agent(base, OpenAIChatModel("gpt-4.1", client=server.client())).run("go")
        cap = server.requests[0].body.get("max_completion_tokens") or server.requests[0].body.get("max_tokens")
    assert record.status is RunStatus.COMPLETED and isinstance(cap, int) and cap < 4096
    assert record.stop_reason is not None and "what the spend limit still allowed" in record.stop_reason


def test_a_call_the_deadline_cuts_short_is_charged() -> None:
    """A streamed reply the run's deadline closes part way was begun by the server (and billed): it is charged
    its prompt and what arrived, estimated and marked (was: nothing, so a run could spend past its limit one
    suspended call at a time)."""
    from agent_runtime.testing import Paced

    slow = Paced(reply("word " * 400), interval=0.01, stall_after=20, stall=3.0)
    with ScriptedServer([slow, reply("done")]) as server:
        agent = build_agent(workflow(0.5), OpenAIChatModel("gpt-4.1", client=server.client()))
        record = agent.run("write", deadline=Deadline.after(1.0))
    assert record.status is RunStatus.SUSPENDED
    [cut] = [c for c in record.model_calls if c.get("usage_estimated") == "cut short"]
    assert cut["usage"]["prompt_tokens"] > 0 and cut["usage"]["completion_tokens"] >= 15 and cut["cost_usd"] > 0
    assert record.cost_usd() == pytest.approx(cut["cost_usd"]) and record.to_dict()["cost"]["estimated"] > 0
