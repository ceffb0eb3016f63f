"""The worker: one queue message → load the thread, run the workflow, persist, reply exactly once.

Run ids come from the event's dedup key, so a redelivered message finds its run's checkpoint and resumes it (or
sees the reply already posted) instead of starting again. The reply is journalled (posting → posted) in the
run's partition: a redelivery never posts twice; a crash between the two marks leaves at most no reply, logged.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from functools import partial
from typing import Any

from aws_lambda_powertools import Logger, Metrics

from .. import telemetry
from ..chat.channels import Channel, Replies, SlackChannel
from ..chat.exceptions import ReplyError
from ..chat.surface import channel_for
from ..config import RuntimeConfig
from ..continuation import ContinuationHook, count_continuation
from ..deadline import Deadline
from ..events import Failed, now_iso
from ..hooks import Hook
from ..models import Model
from ..record import RunRecord, RunState, RunStatus
from ..redaction import scrub
from ..runtime import Services, build_agent, deployed
from ..sandbox import SandboxClient
from ..sandbox.outputs import code_files
from ..skills import SkillLibrary
from ..stopping import StopCheck
from ..stores import RunStore, Store, StoreFileStore, ThreadStore, VersionConflictError
from ..stores.exceptions import InvalidStateError
from ..stores.hook import new_turn
from ..stores.runs import thread_partition
from ..toolsets import ToolEnv
from ..toolsets.secrets import Secrets, env_secret
from ..triggers.event import TriggerEvent, run_id_for
from ..triggers.exceptions import InvalidMessageError
from ..triggers.queue import EventQueue
from ..triggers.queued import (
    ContinueMessage,
    DecisionMessage,
    EventMessage,
    ExpireMessage,
    FeedbackMessage,
    PaneMessage,
    QueueMessage,
    StopMessage,
    TickMessage,
    parse,
)
from ..workflows import Workflow, load_workflow
from .answer import Answers
from .approvals import ApprovalDesk, ChannelApprover, pending, wake_when_expired
from .grants import granted
from .inputs import measure, message_for, resolved, ticked
from .metrics import RunMetrics
from .outcome import Outcome
from .pane import Pane
from .progress import AnswerStreamHook, ProgressHook
from .reports import Reports
from .stops import Stops
from .wakeups import NoWakeups, Wakeups

STILL_WORKING = ":hourglass_flowing_sand: Still working — this one takes longer; I will answer here."


class Worker:
    def __init__(
        self,
        config: RuntimeConfig,
        *,
        store: Store,
        queue: EventQueue | None,
        models: Callable[[Workflow], AbstractContextManager[Model]],
        replies: Replies,
        sandbox: SandboxClient | None = None,
        logger: Logger | None = None,
        metrics: Metrics | None = None,
        max_attachment_bytes: int = 20 * 1024 * 1024,
        progress_interval: float = 3.0,
        secrets: Secrets = env_secret,
        clock: Callable[[], float] = time.time,
        wakeups: Wakeups | None = None,
    ) -> None:
        self.config, self.store, self.queue, self.models, self.replies = config, store, queue, models, replies
        self.sandbox, self.max_attachment_bytes = sandbox, max_attachment_bytes
        self.progress_interval = progress_interval
        self.secrets = secrets  # for ${secret:NAME} in workflows' tools sections
        self.clock = clock  # approvals expire by it
        self.wakeups = wakeups or NoWakeups()  # a run waiting for approval is woken when the request expires
        self.trace_parent: Any = None  # the trace context of the message being handled
        self.runs, self.threads = RunStore(store), ThreadStore(store)
        self.log = logger or Logger(service="agent-runtime-worker")
        clock = lambda: self.clock()  # noqa: E731 (the worker's clock as it is set, for its helpers)
        channel = lambda event, run_id: channel_for(event, self.replies, self.runs, run_id)  # noqa: E731
        approvers = lambda event: self._workflow(event).tools.approvers  # noqa: E731
        self.desk = ApprovalDesk(self.runs, self.threads, channel=channel, approvers=approvers, clock=clock)
        self.answers = Answers(config, self.runs, self.log, max_attachment_bytes, clock=clock)  # composed, rated
        self.pane = Pane(self.threads, replies, self._named, self.log)
        self.reports = Reports(  # pages, the runs channel, each run's metrics (EMF, beside the handler's counts)
            config,
            self.runs,
            secrets,
            lambda: self.replies,
            self.log,
            clock,
            RunMetrics() if metrics is not None else None,
        )
        self.stops = Stops(
            self.runs, self.threads, approvers=approvers, channel=channel, queue=queue, log=self.log, clock=clock
        )
        self.metrics = metrics
        self.skills = SkillLibrary(config.skills_dir)
        self.services = Services(config, self.skills, self.runs, sandbox)  # once per process

    def handle(self, body: dict[str, Any], *, deadline: Deadline) -> Outcome:
        """Process one queue message: a new event, the continuation of a suspended run, a decision on a call
        that waits for approval, the wake-up set for when that request expires, a stop, a rating or the pane."""
        message: QueueMessage | None = parse(body)
        if isinstance(message, TickMessage) and (message := ticked(message, self._named)) is None:
            return Outcome.IGNORED  # a schedule the workflow no longer has (a tick sent before a deploy)
        assert message is not None
        self.trace_parent = telemetry.extract(message.trace if isinstance(message, EventMessage) else None)
        if isinstance(message, PaneMessage):
            return self.pane.opened(message)
        if isinstance(message, StopMessage) and not message.run_id:
            return self.stops.said(message)  # "stop" written in a thread: the run working there, if any
        if isinstance(message, EventMessage):
            event, run_id = self.pane.framed(message.event), run_id_for(message.event)
            self.runs.save_event(run_id, event.to_dict())
        else:
            run_id, saved = message.run_id, self.runs.load_event(message.run_id)
            if saved is None and isinstance(message, DecisionMessage | FeedbackMessage | StopMessage):
                self.log.warning("a click on a run this stack never saw: dropped")  # forged ids, or expired items
                return Outcome.IGNORED
            event = self._saved_event(run_id, saved)
        self.log.set_correlation_id(event.correlation_id)
        self.log.append_keys(run_id=run_id, workflow=event.workflow, source=event.source)
        match message:
            case FeedbackMessage():  # an answered run's rating: no run, no duplicate check
                return self.answers.rate(message, then=self.reports.rated)  # the runs channel, the metrics
            case StopMessage():  # in a group of its own: the run it stops may be working right now
                return self.stops.asked(message, event)
        if self.runs.reply_state(run_id) is not None:
            return self._answered_already(event)
        return self._turn(message, event, run_id, body, deadline)

    def _turn(
        self, message: QueueMessage, event: TriggerEvent, run_id: str, body: dict[str, Any], deadline: Deadline
    ) -> Outcome:
        """What moves a run: a decision, the wake-up of an expired request, a new event, a continuation."""
        match message:
            case DecisionMessage():
                refused = self.desk.record(event, message)
                if refused is not None:
                    return refused
            case ExpireMessage():
                waiting = self.desk.waiting(run_id) or {}
                if not self.desk.expire(event, run_id, waiting):
                    wake_when_expired(
                        self.wakeups, event, run_id, waiting, self.clock(), again=True
                    )  # early: again, if it still waits
                    return Outcome.IGNORED
            case EventMessage():
                deferred = self._defer_behind_active_run(event, run_id, body, deadline)
                if deferred is not None:
                    return deferred
        return self._run(event, run_id, continuation=isinstance(message, ContinueMessage), deadline=deadline)

    def _answered_already(self, event: TriggerEvent) -> Outcome:
        """A duplicate delivery. The messages that waited behind the run go out again if they may still be
        waiting (a release cut short by a failed send; each is sent once, under its own dedup id)."""
        self.log.info("duplicate delivery: already answered")
        if self.threads.active(event.thread_id) is None:
            self.desk.release(event.thread_id, self.queue)
        return Outcome.DUPLICATE

    def _workflow(self, event: TriggerEvent) -> Workflow:
        return self._named(str(event.workflow))

    def _named(self, name: str) -> Workflow:
        loaded = load_workflow(name, self.config.workflows_dir, skill_names=self.skills.names())
        return deployed(loaded, self.config)

    def _saved_event(self, run_id: str, saved: dict[str, Any] | None) -> TriggerEvent:
        if saved is None:
            raise InvalidMessageError(f"a message for unknown run {run_id}")
        return TriggerEvent.from_dict(saved)

    def _defer_behind_active_run(
        self, event: TriggerEvent, run_id: str, message: dict[str, Any], deadline: Deadline
    ) -> Outcome | None:
        """A thread's turns run in order: a new turn waits behind a suspended one (queued again after its
        continuation, in the thread's message group), instead of answering without it and racing its save.
        Behind a run that awaits approval: a JIRA "approve"/"deny" is the decision; an expired request resumes
        that run first; anything else waits with the thread until the decision."""
        other = self.threads.active(event.thread_id)
        if not other or other == run_id:
            return None
        waiting = self.desk.waiting(other)
        if waiting is not None:
            resume = partial(self._run, continuation=False, deadline=deadline)
            return self.desk.behind(event, message, other, waiting, resume)
        if self.queue is None:
            return None
        self.queue.send(message, group=event.thread_id, dedup=f"{event.dedup_key}:after:{other}")
        self.log.info("deferred behind a suspended run", extra={"active_run": other})
        return Outcome.DEFERRED

    def _run(self, event: TriggerEvent, run_id: str, *, continuation: bool, deadline: Deadline) -> Outcome:
        workflow, files = self._workflow(event), StoreFileStore(self.store, thread_partition(event.thread_id))
        try:  # Slack or JIRA unreachable, or a method refused, before the run began: a failed run that says why
            event, channel, state, message, grant = self._prepare(event, workflow, run_id, files, continuation)
        except ReplyError as error:
            if self.runs.load_checkpoint(run_id) is not None:  # a run under way keeps its work: redelivered later
                raise
            channel = channel_for(event, self.replies, self.runs, run_id)
            return self._not_started(event, channel, workflow, run_id, workflow.model.name, error, files)
        hooks: list[Hook] = [ProgressHook(channel.progress, workflow=workflow.name, interval=self.progress_interval)]
        if isinstance(channel, SlackChannel) and channel.thread_ts:  # the answer streams into its thread
            hooks.append(AnswerStreamHook(channel.stream))
        if self.queue is not None:
            hooks.append(ContinuationHook(self.queue, thread_id=event.thread_id))
        with self.models(workflow) as model:
            try:
                agent = build_agent(
                    workflow,
                    model,
                    replace(  # the process's services, with what this message brings
                        self.services,
                        tool_env=self._tool_env(event),
                        approver=ChannelApprover(self.runs, channel, event.thread_id),
                        clock=self.clock,
                        thread_id=event.thread_id,
                        trace_parent=self.trace_parent,
                        granted=grant,
                    ),
                    files=files,
                    hooks=hooks,
                )
            except Exception as error:  # a tools section that cannot be built (a listing, a document): apologise
                return self._not_started(event, channel, workflow, run_id, model.name, error, files)
            stop = StopCheck(lambda: self.runs.stop_request(run_id))
            record = agent.run(message, state=state, deadline=deadline, run_id=run_id, stop=stop)
        measure(self.metrics, record)
        waits = record.status in (RunStatus.SUSPENDED, RunStatus.AWAITING_APPROVAL)
        self.threads.mark_active(event.thread_id, record.run_id if waits else None)
        if record.status is RunStatus.AWAITING_APPROVAL:
            channel.waiting(f":raised_hand: Waiting for approval ({record.stop_reason}).")
            wake_when_expired(
                self.wakeups, event, run_id, pending(record.state.context) if record.state else {}, self.clock()
            )
            return Outcome.AWAITING_APPROVAL
        if waits:
            channel.progress(STILL_WORKING)
            return Outcome.SUSPENDED
        outcome = self._finish(event, channel, workflow, record, files)
        self.desk.release(event.thread_id, self.queue)  # messages that waited behind an approval
        return outcome

    def _prepare(
        self, event: TriggerEvent, workflow: Workflow, run_id: str, files: StoreFileStore, continuation: bool
    ) -> tuple[TriggerEvent, Channel, RunState | None, str | None, float]:
        """What the run starts from: the event (a reaction's: the message it marks), its channel with the working
        message posted, the state, the message the model reads (None: a checkpoint goes on), the dollars granted."""
        event = resolved(event, self.replies)
        channel = channel_for(event, self.replies, self.runs, run_id)
        checkpoint = self.runs.load_checkpoint(run_id)
        message: str | None = None
        state: RunState | None
        if checkpoint is not None:
            state = checkpoint[0]
            if continuation:
                count_continuation(state.context)
        else:
            state = self._fresh_state(event, run_id, files)
            message = message_for(event, channel, files, self.max_attachment_bytes, first=state is None)
            if state is None:  # the thread's first message names it (where a surface names conversations)
                channel.title(event.text)
        grant = granted(event, workflow, channel, run_id, self.threads, self.log) if checkpoint is None else 0.0
        if checkpoint is None:
            self.threads.mark_latest(event.thread_id, run_id)  # what "stop" written in the thread stops
        channel.begin()
        return event, channel, state, message, grant

    def _not_started(
        self,
        event: TriggerEvent,
        channel: Channel,
        workflow: Workflow,
        run_id: str,
        model: str,
        error: Exception,
        files: StoreFileStore,
    ) -> Outcome:
        """A run that could not be built still ends in an answer (the apology), a record saying why, and a thread
        free for its next message: never "working" forever, never a message redelivered to the dead-letter queue."""
        record = RunRecord(run_id, workflow.name, model, status=RunStatus.FAILED)
        record.stop_reason = scrub(f"the run could not start: {type(error).__name__}: {error}")[:1_000]
        record.event(Failed(error=type(error).__name__))
        record.ended_at = now_iso()
        self.runs.save_record(record, thread_id=event.thread_id)
        self.threads.mark_active(event.thread_id, None)
        try:
            outcome = self._finish(event, channel, workflow, record, files)  # its one log line says why
        except (ReplyError, OSError) as unsaid:  # where the run failed, its apology fails too: the record says why
            said = {"status": str(record.status), "reason": record.stop_reason, "apology": str(unsaid)}
            self.log.warning("run did not complete", extra=said)
            outcome = Outcome.FAILED
        self.desk.release(event.thread_id, self.queue)
        return outcome

    def _fresh_state(self, event: TriggerEvent, run_id: str, files: StoreFileStore) -> RunState | None:
        state, version = self.threads.load(event.thread_id)
        # Kept with the run, not in memory: a turn that suspends finishes in another invocation.
        self.runs.save_thread_base(run_id, version, [meta.id for meta in code_files(files)])
        return new_turn(state, run_id)

    def _tool_env(self, event: TriggerEvent) -> ToolEnv:
        origin = {"source": event.source, **event.reply_to}
        return ToolEnv.from_env(slack=self.replies.slack, jira=self.replies.jira, origin=origin, secrets=self.secrets)

    def _finish(
        self, event: TriggerEvent, channel: Channel, workflow: Workflow, record: RunRecord, files: StoreFileStore
    ) -> Outcome:
        base = self.runs.load_thread_base(record.run_id)
        link, private = self.reports.page(event, record)
        answer = self.answers.compose(record, workflow, base, files, page=link)
        self.answers.post(channel, record.run_id, answer)
        self.reports.finished(event, record, link, private)  # the runs channel, the metrics
        if record.state is not None:  # every ending: the next message of the thread goes on from this turn
            self._save_thread(event.thread_id, base, record.state)
        if record.status is RunStatus.STOPPED:
            return Outcome.STOPPED
        if not answer.answered:
            self.log.warning("run did not complete", extra={"status": str(record.status), "reason": record.stop_reason})
        return Outcome.ANSWERED if answer.answered else Outcome.FAILED

    def _save_thread(self, thread_id: str, base: dict[str, Any] | None, state: RunState) -> None:
        """Saved over the version the turn started from, so a turn that finished meanwhile is never overwritten.

        Turns of one thread are serialised (FIFO group; a new turn waits behind a suspended one), so a conflict
        means an out-of-band writer; the answer is already posted, only this turn's memory is not kept."""
        version = base.get("version") if base is not None else self.threads.load(thread_id)[1]
        try:
            self.threads.save(thread_id, state, expected_version=version)
        except VersionConflictError:
            self.log.warning("thread saved by another turn since this one started; this turn's state not kept")
        except InvalidStateError as error:
            self.log.warning("invalid turn state; the thread keeps its previous one", extra={"why": str(error)})
