"""Deadline → checkpoint → suspend → re-enqueue → resume in a new invocation (SQS on moto, server mode)."""

from __future__ import annotations

import json
from pathlib import Path

import boto3
from agent_runtime import Agent, Deadline, Hook, RunStatus, ToolRegistry
from agent_runtime.context import ContextEngine
from agent_runtime.loop.continuation import ContinuationHook, count_continuation
from agent_runtime.stores import LocalStore, PersistenceHook, RunStore, StoreFileStore
from agent_runtime.testing import ScriptedServer, call, reply
from agent_runtime.triggers.queue import SqsQueue

from tests.compaction_support import fetch
from tests.conftest import make_workflow, model_for


def test_a_suspended_run_reenqueues_itself_and_finishes_in_the_next_invocation(
    moto_endpoint: str, tmp_path: Path
) -> None:
    session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
    sqs = session.client("sqs", endpoint_url=moto_endpoint)
    queue = sqs.create_queue(QueueName="runs")["QueueUrl"]
    store = LocalStore(tmp_path)

    def worker(server: ScriptedServer, deadline: Deadline) -> tuple[Agent, Deadline]:
        workflow = make_workflow()
        tools = ToolRegistry([fetch])
        hooks: list[Hook] = [
            ContextEngine(workflow, tools),
            PersistenceHook(RunStore(store), mutating=set()),
            ContinuationHook(SqsQueue(sqs, queue), max_continuations=3),
        ]
        return Agent(
            workflow, model_for(server), tools=tools, hooks=hooks, files=StoreFileStore(store, "run#L")
        ), deadline

    with ScriptedServer([call("fetch", {"n": 1}), call("fetch", {"n": 2}), reply("finished")]) as server:
        agent, _ = worker(server, Deadline.none())
        first = agent.run("go", run_id="L", deadline=Deadline.after(0.0))  # the invocation is out of time at once
        assert first.status is RunStatus.SUSPENDED
        [message] = sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10)["Messages"]
        body = json.loads(message["Body"])
        assert body == {"type": "continue", "run_id": "L", "thread_id": None, "continuation": 1}
        # the next invocation: load the checkpoint named in the message and carry on
        state, _ = RunStore(store).load_checkpoint(body["run_id"])  # type: ignore[misc]
        count_continuation(state.context)
        agent, _ = worker(server, Deadline.none())
        second = agent.run(state=state, deadline=Deadline.after(60))
    assert second.status is RunStatus.COMPLETED and second.final_answer == "finished"
    assert "Messages" not in sqs.receive_message(QueueUrl=queue, MaxNumberOfMessages=10, WaitTimeSeconds=0)


def test_continuations_are_capped(moto_endpoint: str, tmp_path: Path) -> None:
    session = boto3.session.Session(aws_access_key_id="t", aws_secret_access_key="t", region_name="us-east-1")
    sqs = session.client("sqs", endpoint_url=moto_endpoint)
    queue = sqs.create_queue(QueueName="capped")["QueueUrl"]
    workflow = make_workflow()
    tools = ToolRegistry([fetch])
    with ScriptedServer([]) as server:
        agent = Agent(
            workflow,
            model_for(server),
            tools=tools,
            hooks=[ContinuationHook(SqsQueue(sqs, queue), max_continuations=2)],
        )
        record = agent.run("go", deadline=Deadline.after(0.0))
        assert record.status is RunStatus.SUSPENDED  # first suspension: enqueued
        assert record.state is not None
        record.state.context["continuations"] = 2
        again = agent.run(state=record.state, deadline=Deadline.after(0.0))
    assert again.status is RunStatus.FAILED and "continued 2 times without finishing" in (again.stop_reason or "")


def test_the_stored_record_is_the_returned_one_after_a_refused_continuation(tmp_path: Path) -> None:
    """Was: persistence saved the record before the continuation hook failed it: stored 'suspended', returned
    'failed', and the continuation_refused event never reached the store."""

    class Queue:
        def send(self, *args: object, **kwargs: object) -> None:
            raise AssertionError("a refused continuation enqueues nothing")

    runs = RunStore(LocalStore(tmp_path))
    workflow = make_workflow()
    with ScriptedServer([]) as server:
        hooks = [PersistenceHook(runs, mutating=set()), ContinuationHook(Queue(), max_continuations=0)]
        agent = Agent(workflow, model_for(server), tools=ToolRegistry(), hooks=hooks)
        record = agent.run("hi", deadline=Deadline.after(0))
    assert record.status is RunStatus.FAILED
    stored = runs.load_record(record.run_id)
    assert stored is not None and stored["status"] == "failed"
    assert any(e["type"] == "continuation_refused" for e in stored["events"])
