"""A turn of a run: its state (the checkpoint, or the thread's last turn), its message, the agent built for it,
and what the worker does with the run's outcome — answer, wait for a decision, or say it is still working."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import replace
from typing import Any

from ..chat.channels import Channel, SlackChannel
from ..chat.exceptions import ReplyError
from ..deployment import Services
from ..hooks import Hook
from ..inbound import TriggerEvent
from ..loop.continuation import ContinuationHook, count_continuation
from ..record import RunRecord, RunState, RunStatus
from ..sandbox.outputs import code_files
from ..stopping import StopCheck
from ..stores import StoreFileStore
from ..stores.running import Started
from ..stores.runs import thread_partition
from ..toolsets import ToolEnv
from ..workflows import Workflow
from .access import Admitted, admitted, charge
from .approvals import ChannelApprover, pending, wake_when_expired
from .connections import connections_for
from .finish import finish, loaded, not_started
from .grants import go_on, granted
from .handlers import Delivery
from .inputs import measure, message_for, resolved
from .outcome import Outcome
from .progress import AnswerStreamHook, ProgressHook

STILL_WORKING = ":hourglass_flowing_sand: Still working — this one takes longer; I will answer here."


def answered_already(delivery: Delivery[Any], event: TriggerEvent, run_id: str | None = None) -> Outcome:
    """A duplicate delivery. The messages that waited behind the run go out again if they may still be waiting
    (a release cut short by a failed send; each is sent once, under its own dedup id). ``run_id``: an answer its
    invocation was cut off while posting is finished (``Answers.post_again``)."""
    process = delivery.process
    process.log.info("duplicate delivery: already answered")
    if run_id is not None and delivery.runs.reply_state(run_id) == "posting":
        try:
            channel = delivery.channel(resolved(event, process.sources, delivery.chat), run_id)
            delivery.answers.post_again(channel, run_id)
        except ReplyError as error:  # still unreachable: the queue delivers the message again, to try again
            process.log.warning("the answer cut off while posting is not finished", extra={"reason": str(error)})
            raise
    if delivery.threads.active(event.thread_id) is None:
        delivery.desk.release(event.thread_id, process.queue)
    return Outcome.DUPLICATE


def run_turn(delivery: Delivery[Any], event: TriggerEvent, run_id: str, *, continuation: bool) -> Outcome:
    from ..runtime import build_agent  # the model client, context engine, tools: primed (setup.prime_worker)

    process = delivery.process
    files = StoreFileStore(process.store, thread_partition(event.thread_id))
    workflow = loaded(delivery, event, run_id, files)
    if isinstance(workflow, Outcome):  # its file cannot be read: a failed run, the person told which key or line
        return workflow
    checkpoint = delivery.runs.load_checkpoint(run_id)
    door = admitted(delivery, event, workflow, run_id, checkpoint[0] if checkpoint is not None else None)
    if isinstance(door, Outcome):  # its access rules or a budget refused a new run: the person was told why
        return door
    try:  # Slack or JIRA unreachable, or a method refused, before the run began: a failed run that says why
        event, channel, state, message = _prepare(delivery, event, run_id, files, checkpoint, continuation)
    except ReplyError as error:
        if checkpoint is not None:  # a run under way keeps its work: redelivered later
            raise
        channel = delivery.channel(event, run_id)
        return not_started(delivery, event, channel, workflow, run_id, workflow.model.name, error, files)
    grant = _grant(delivery, event, workflow, channel, run_id, door) if checkpoint is None else 0.0
    with ExitStack() as opened:
        # The model opened (OPENAI_BASE_URL not a URL) or the agent built (a listing, a document, a tool module
        # that fails to import): an error is the run's apology and failed record, never "working" forever.
        name = process.config.model_override or workflow.model.name
        try:
            model = opened.enter_context(process.models(workflow))
            name = model.name
            services = door.given(_services(delivery, event, channel, grant))
            services = replace(services, identity=connections_for(delivery, event, workflow), go_on=go_on(workflow))
            agent = build_agent(workflow, model, services, files=files, hooks=_hooks(delivery, event, channel))
        except Exception as error:
            return not_started(delivery, event, channel, workflow, run_id, name, error, files)
        stop = StopCheck(lambda: delivery.runs.stop_request(run_id))
        record = agent.run(message, state=state, deadline=delivery.deadline, run_id=run_id, stop=stop)
    measure(process.metrics, record)
    charge(delivery, workflow, door.run, record)
    return _ended(delivery, event, channel, workflow, record, files)


def _ended(
    delivery: Delivery[Any],
    event: TriggerEvent,
    channel: Channel,
    workflow: Workflow,
    record: RunRecord,
    files: StoreFileStore,
) -> Outcome:
    """What the invocation's end says: waiting for a decision, suspended to go on, or the run's answer."""
    process = delivery.process
    waits = record.status in (RunStatus.SUSPENDED, RunStatus.AWAITING_APPROVAL)
    delivery.threads.mark_active(event.thread_id, record.run_id if waits else None)
    if record.status is RunStatus.AWAITING_APPROVAL:
        approval = (record.stop_reason or "").startswith("awaiting approval")
        channel.waiting(
            f":raised_hand: Waiting for approval ({record.stop_reason})."
            if approval
            else f":link: Waiting for {str(record.stop_reason).removeprefix('awaiting ')}: asked privately."
        )
        waiting = pending(record.state.context) if record.state else {}
        wake_when_expired(process.wakeups, event, record.run_id, waiting, process.now())
        return Outcome.AWAITING_APPROVAL
    if waits:
        channel.progress(STILL_WORKING)
        return Outcome.SUSPENDED
    delivery.desk.close(event, record)  # requests the run still waited on (it was stopped) can decide nothing now
    outcome = finish(delivery, event, channel, workflow, record, files)
    delivery.desk.release(event.thread_id, process.queue)  # messages that waited behind an approval
    return outcome


def _prepare(
    delivery: Delivery[Any],
    event: TriggerEvent,
    run_id: str,
    files: StoreFileStore,
    checkpoint: tuple[RunState, int] | None,
    continuation: bool,
) -> tuple[TriggerEvent, Channel, RunState | None, str | None]:
    """What the run starts from: the event (a reaction's: the message it marks), its channel with the working
    message posted, the state (its checkpoint, else the thread's last turn) and the message the model reads (None:
    a run that resumes has read it already)."""
    process = delivery.process
    event = resolved(event, process.sources, delivery.chat)
    channel = delivery.channel(event, run_id)
    message: str | None = None
    if checkpoint is not None:
        state: RunState | None = checkpoint[0]
        if continuation:
            count_continuation(checkpoint[0].context)
    else:
        state = _fresh_state(delivery, event, run_id, files)
        message = message_for(event, channel, files, process.max_attachment_bytes, first=state is None)
        if state is None:  # the thread's first message names it (where a surface names conversations)
            channel.title(event.text)
        delivery.stops.started(event, run_id)  # what "stop" written in the thread stops
    channel.begin()
    return event, channel, state, message


def _grant(
    delivery: Delivery[Any], event: TriggerEvent, workflow: Workflow, channel: Channel, run_id: str, door: Admitted
) -> float:
    """An approver's "continue with $N more" in the message that starts a run (grants.py: who may, and how much)."""
    return granted(event, workflow, channel, run_id, delivery.threads, delivery.process.log, door.run)


def _hooks(delivery: Delivery[Any], event: TriggerEvent, channel: Channel) -> list[Hook]:
    process = delivery.process
    hooks: list[Hook] = [
        Started(delivery.runs, event.thread_id),  # runs list: running, then interrupted if this process ends mid-run
        ProgressHook(channel.progress, workflow=str(event.workflow), interval=process.progress_interval),
    ]
    if isinstance(channel, SlackChannel) and channel.thread_ts:  # the answer streams into its thread
        hooks.append(AnswerStreamHook(channel.stream))
    if process.queue is not None:
        hooks.append(ContinuationHook(process.queue, thread_id=event.thread_id))
    return hooks


def _fresh_state(delivery: Delivery[Any], event: TriggerEvent, run_id: str, files: StoreFileStore) -> RunState | None:
    from ..stores.hook import new_turn  # with the tools it journals: loaded with the run (see run_turn)

    state, version = delivery.threads.load(event.thread_id)
    # Kept with the run, not in memory: a turn that suspends finishes in another invocation.
    delivery.runs.save_thread_base(run_id, version, [meta.id for meta in code_files(files)])
    return new_turn(state, run_id)


def _services(delivery: Delivery[Any], event: TriggerEvent, channel: Channel, grant: float) -> Services:
    """The process's services, with what this message brings."""
    return replace(
        delivery.process.services,
        runs=delivery.runs,  # the run's checkpoints and record, through the message's unit of work
        tool_env=_tool_env(delivery, event),
        approver=ChannelApprover(delivery.runs, channel, event.thread_id),
        clock=delivery.process.clock,
        thread_id=event.thread_id,
        trace_parent=delivery.trace_parent,
        granted=grant,
    )


def _tool_env(delivery: Delivery[Any], event: TriggerEvent) -> ToolEnv:
    process = delivery.process
    origin = {"source": event.source, **event.reply_to}
    slack, jira = process.replies.slack, process.replies.jira
    return ToolEnv.from_env(slack=slack, jira=jira, origin=origin, secrets=process.secrets)
