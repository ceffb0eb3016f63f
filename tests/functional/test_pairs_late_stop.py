"""The webhook's idempotency records x stop (B x stop, the Lambda path): a run-starting event and "stop" written in
its thread, each delivered again after SQS's deduplication window (the queue drained between deliveries: moto
forgets a deduplication id once its message is deleted), twice. Invariant: one run, one stop, and the stop reaches
that run — it ends at its next step, stopped by the one who wrote it; no late retry starts a second run or writes a
second stop (which would find the thread's next run, or answer "nothing to stop" in the thread).

Real paths: signed Slack events into the webhook app, SQS and DynamoDB in moto's server mode, the worker taking
each message, the scripted model over HTTP, the replies on a fake Slack API."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from agent_runtime.stores import RunStore, ThreadStore
from agent_runtime.testing import Paced, Reply, ScriptedCall, reply

from tests.approvals_support import mention
from tests.slack_support import streamed_text
from tests.triggers_support import slack_request

LONG = "The payments service is up and its queue drains. " * 120  # ~20 s to stream: the stop comes first
STARTED, STOPPED = "1763800040.0", "1763800041.0"


def read_only(tmp_path: Path) -> None:
    flow = tmp_path / "ops-actions.yaml"
    flow.write_text(flow.read_text().replace("[ops_tools:restart_service]", "[ops_tools:drain_report]"))


def late(s: Any, event_id: str, text: str, ts: str, retry: int) -> list[str]:
    """``event_id`` delivered again as Slack's ``retry``-th retry, then the queue drained: what the worker did."""
    answer = s.post("/slack/events", *slack_request(mention(event_id, text, ts), **{"X-Slack-Retry-Num": str(retry)}))
    assert answer["statusCode"] == 200, answer
    return list(s.deliver())


# When the late retries come: while the run works (after its stop was taken), or once it has ended.
@pytest.mark.parametrize("during", [(), ("start",), ("stop",), ("start", "stop")])
def test_a_run_and_its_stop_delivered_late_twice_are_one_run_stopped_once(
    system, scripted, ops, tmp_path: Path, during: tuple[str, ...]
) -> None:
    ops()
    read_only(tmp_path)
    seen: dict[str, Any] = {"late": []}
    events = {"start": ("EvLateRun", "is payments up?", STARTED), "stop": ("EvLateStop", "stop", STOPPED)}

    def retries(which: tuple[str, ...]) -> None:
        for name in which:
            for retry in (1, 2):
                seen["late"] += late(s, *events[name], retry)

    def stop_while_streaming(request: Any) -> Paced:
        s.post("/slack/events", *slack_request(mention(*events["stop"])))
        seen["stop"] = s.deliver()  # another invocation takes it: the run holds its thread's group
        retries(during)
        return Paced(reply(LONG), interval=0.05)

    checking = Reply(text="Checking the queue first.", calls=(ScriptedCall("drain_report", {"service": "payments"}),))
    server = scripted(checking, stop_while_streaming)
    s = system(server)
    s.apis.streams = True
    s.post("/slack/events", *slack_request(mention(*events["start"])))
    outcomes = s.deliver()
    retries(tuple(name for name in events if name not in during))

    assert seen["stop"] == ["stopped"] and outcomes[0] == "stopped", (seen, outcomes)
    assert seen["late"] == [], seen["late"]  # no late retry reached the worker
    assert len(server.requests) == 2  # no model call after the stop, nor a second run's
    runs = RunStore(s.store)
    [summary] = runs.list_runs(limit=5)
    record = runs.load_record(summary.run_id) or {}
    assert record["status"] == "stopped" and record["stop_reason"] == "Stopped by <@U0DANA>."
    assert [e["by"] for e in record["events"] if e["type"] == "stopped"] == ["U0DANA"]
    assert streamed_text(s).count(":octagonal_sign: Stopped by <@U0DANA>.") == 1
    assert ThreadStore(s.store).active(runs.load_event(summary.run_id).thread_id) is None  # the thread is free
