"""An approval, and a journal entry, answer only the call they were made for (issue 31, point 2).

Servers reuse call ids (llama.cpp and many proxies number them ``call_1``, ``call_2`` per reply). Was: an approval
and a mutating call's journal entry were keyed by the id alone and carried into the thread's later turns, so a
later call reusing an approved id ran unasked with other arguments, and a mutating call reusing an id was neither
asked nor run (the model was told the earlier call's result)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_runtime import RunStatus, Services, tool
from agent_runtime.approvals import ApprovalRequest, Decision
from agent_runtime.approvals.gate import ApprovalGate, arguments_hash
from agent_runtime.models import ToolCall
from agent_runtime.runtime import build_agent
from agent_runtime.stores import LocalStore, RunStore, StoreFileStore
from agent_runtime.stores.hook import new_turn
from agent_runtime.testing import ScriptedServer, call, reply
from agent_runtime.toolsets import ToolSettings

from tests.conftest import make_workflow, model_for

Start = Callable[..., ScriptedServer]
PAID: list[int] = []
POSTED: list[str] = []


@tool(mutating=True)
def pay(amount: int) -> str:
    """Pay an amount.

    Args:
        amount: How much.
    """
    PAID.append(amount)
    return f"paid {amount}"


@tool(mutating=True)
def post(text: str) -> str:
    """Post a comment.

    Args:
        text: The comment.
    """
    POSTED.append(text)
    return f"posted {text!r}"


class FirstOnly:
    """Approves the first request it is asked; every later one waits (nobody answered yet)."""

    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        self.asked.append(request)
        return (Decision.APPROVED, "U0LEAD") if len(self.asked) == 1 else (Decision.PENDING, None)


def thread_turns(server: ScriptedServer, tmp_path: Path, approval: str, approver: Any, tools: list[Any]) -> Any:
    store = LocalStore(tmp_path / "state")
    flow = replace(make_workflow(), tools=ToolSettings(approval=approval))
    shaped = [replace(t, approval=approval) for t in tools]

    def turn(message: str, state: Any, run_id: str) -> Any:
        agent = build_agent(
            flow,
            model_for(server),
            Services(runs=RunStore(store), approver=approver),
            files=StoreFileStore(store, "thread"),
            tools=shaped,
        )
        return agent.run(message, state=new_turn(state, run_id), run_id=run_id)

    return turn


def test_an_approved_id_reused_in_a_later_turn_with_other_arguments_is_asked_again(
    scripted: Start, tmp_path: Path
) -> None:
    PAID.clear()
    approver = FirstOnly()
    server = scripted(
        call("pay", {"amount": 5}, id="call_1"),
        reply("Paid 5."),
        call("pay", {"amount": 500}, id="call_1"),  # the server numbers calls per reply
    )
    turn = thread_turns(server, tmp_path, "mutating", approver, [pay])
    first = turn("Pay 5.", None, "run-1")
    assert first.status is RunStatus.COMPLETED and PAID == [5]
    second = turn("Now pay 500.", first.state, "run-2")
    assert second.status is RunStatus.AWAITING_APPROVAL  # asked, not run on the first call's approval
    assert PAID == [5] and [(r.tool, r.summary.count("500")) for r in approver.asked] == [("pay", 0), ("pay", 1)]
    assert approver.asked[1].call_id != "call_1"  # stored under an id of its own


def test_a_mutating_call_reusing_an_id_runs_and_is_not_answered_with_the_earlier_result(
    scripted: Start, tmp_path: Path
) -> None:
    POSTED.clear()
    server = scripted(
        call("post", {"text": "first"}, id="call_1"),
        reply("Posted."),
        call("post", {"text": "second"}, id="call_1"),
        lambda request: reply(next(iter(request.tool_results().values()))),
    )
    turn = thread_turns(server, tmp_path, "never", FirstOnly(), [post])
    first = turn("Post 'first'.", None, "run-1")
    second = turn("Post 'second'.", first.state, "run-2")
    assert second.status is RunStatus.COMPLETED, second.stop_reason
    assert POSTED == ["first", "second"] and second.final_answer == "posted 'second'"
    assert not [e for e in second.events if e["type"] == "mutation_replayed"]


def test_a_decision_on_record_for_other_arguments_never_approves_this_call() -> None:
    """Defence in depth, should an id ever repeat: the gate compares the tool and the arguments' hash."""

    class Approves:
        def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
            return Decision.APPROVED, "U0LEAD"

    from agent_runtime import Deadline, RunContext, RunRecord, RunState
    from agent_runtime.approvals.gate import APPROVALS
    from agent_runtime.loop import Run

    state = RunState(run_id="run-x", workflow="test-flow")
    APPROVALS.set(state.context, {"call_1": {
        "tool": "pay", "arguments_sha256": arguments_hash('{"amount": 5}'), "requested_at": 0.0,
        "expires_at": 9e12, "status": "approved", "by": "U0LEAD", "decided_at": 1.0}})  # fmt: skip
    run = Run(make_workflow(), state, RunRecord("run-x", "test-flow", "m", state=state),
              RunContext("run-x", "test-flow", None, Deadline.none()), Deadline.none())  # type: ignore[arg-type]  # fmt: skip
    gate = ApprovalGate(Approves())
    assert gate.check(run, ToolCall("call_1", "pay", '{"amount": 5}'))[0] is Decision.APPROVED
    assert gate.check(run, ToolCall("call_1", "pay", '{"amount": 500}'))[0] is Decision.DENIED
    assert gate.check(run, ToolCall("call_1", "refund", '{"amount": 5}'))[0] is Decision.DENIED
