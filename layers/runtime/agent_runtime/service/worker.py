"""The worker: one queue message → load the thread, run the workflow, persist, reply exactly once.

Run ids come from the event's dedup key, so a redelivered message finds its run's checkpoint and resumes it (or
sees the reply already posted) instead of starting again. The reply is journalled (posting → posted) in the
run's partition: a redelivery never posts twice; a crash between the two marks leaves at most no reply, logged.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import replace
from functools import partial
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from .. import telemetry
from ..approvals.gate import ApprovalEntry
from ..chat.channels import Channel, Replies, SlackChannel
from ..chat.surface import channel_for
from ..config import RuntimeConfig
from ..continuation import ContinuationHook, count_continuation
from ..deadline import Deadline
from ..errors import AgentRuntimeError
from ..events import Compaction, Failed, now_iso
from ..hooks import Hook
from ..models import Model
from ..record import RunRecord, RunState, RunStatus
from ..runtime import answer_footer, build_agent, deployed
from ..sandbox import SandboxClient
from ..sandbox.outputs import code_files, written_since
from ..skills import SkillLibrary
from ..spend import describe
from ..stores import RunStore, Store, StoreFileStore, ThreadStore, VersionConflictError
from ..stores.exceptions import InvalidStateError
from ..stores.hook import new_turn
from ..stores.runs import thread_partition
from ..toolsets import ToolEnv
from ..toolsets.secrets import Secrets, env_secret
from ..triggers.event import TriggerEvent, run_id_for
from ..triggers.exceptions import InvalidMessageError, ReplyError
from ..triggers.queue import EventQueue
from ..triggers.queued import (
    ContinueMessage,
    DecisionMessage,
    EventMessage,
    ExpireMessage,
    FeedbackMessage,
    PaneMessage,
    parse,
)
from ..workflows import Workflow, load_workflow
from .approvals import ApprovalDesk, ChannelApprover, pending
from .outcome import Outcome
from .progress import AnswerStreamHook, ProgressHook
from .wakeups import NoWakeups, Wakeups

REPLY_FILES = 5  # files the turn's Python wrote, attached to the answer (within max_attachment_bytes in all)
APOLOGY = "Sorry — I could not finish this one. If you report it, quote run `{run_id}`."
CUT_NOTE = "_This answer was cut off at the model's output limit._"
CAP_NOTE = "_Stopped at the workflow's limit of tool calls: this answer may be incomplete._"
COST_LIMIT_NOTE = (
    "_{why} This run cost {cost}. The thread keeps its work: one of the workflow's approvers can reply "
    '"continue with $N more" to go on._'
)
CONTINUE_WITH = re.compile(r"\bcontinue with \$(\d{1,6}(?:\.\d{1,2})?) more\b", re.IGNORECASE)
MAX_GRANT = 10_000.0  # dollars: one message cannot grant more
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
        self.sandbox, self.max_attachment_bytes, self.progress_interval = (
            sandbox,
            max_attachment_bytes,
            progress_interval,
        )
        self.secrets = secrets  # for ${secret:NAME} in workflows' tools sections
        self.clock = clock  # approvals expire by it
        self.wakeups = wakeups or NoWakeups()  # a run waiting for approval is woken when the request expires
        self.trace_parent: Any = None  # the trace context of the message being handled
        self.runs, self.threads = RunStore(store), ThreadStore(store)
        self.desk = ApprovalDesk(
            self.runs,
            self.threads,
            channel=lambda event, run_id: channel_for(event, self.replies, self.runs, run_id),
            approvers=lambda event: self._workflow(event).tools.approvers,
            clock=lambda: self.clock(),
        )
        self.log = logger or Logger(service="agent-runtime-worker")
        self.metrics = metrics
        self.skills = SkillLibrary(config.skills_dir)

    def handle(self, body: dict[str, Any], *, deadline: Deadline) -> Outcome:
        """Process one queue message: a new event, the continuation of a suspended run, a decision on a call
        that waits for approval, the wake-up set for when that request expires, a rating or the app's pane."""
        message = parse(body)
        self.trace_parent = telemetry.extract(message.trace if isinstance(message, EventMessage) else None)
        if isinstance(message, PaneMessage):
            return self._pane(message)
        if isinstance(message, EventMessage):
            event, run_id = self._in_pane(message.event), run_id_for(message.event)
            self.runs.save_event(run_id, event.to_dict())
        elif isinstance(message, DecisionMessage | FeedbackMessage) and self.runs.load_event(message.run_id) is None:
            self.log.warning("a click on a run this stack never saw: dropped")  # forged ids, or expired items
            return Outcome.IGNORED
        elif isinstance(message, FeedbackMessage):  # an answered run's rating: no run, no duplicate check
            return self._rate(message)
        else:
            run_id = message.run_id
            event = self._saved_event(run_id)
        self.log.set_correlation_id(event.correlation_id)
        self.log.append_keys(run_id=run_id, workflow=event.workflow, source=event.source)
        if self.runs.reply_state(run_id) is not None:
            return self._answered_already(event)
        match message:
            case DecisionMessage():
                refused = self.desk.record(event, message)
                if refused is not None:
                    return refused
            case ExpireMessage():
                waiting = self.desk.waiting(run_id) or {}
                if not self.desk.expire(event, run_id, waiting):
                    self._wake_when_expired(event, run_id, waiting, again=True)  # early: again, if it still waits
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

    def _rate(self, message: FeedbackMessage) -> Outcome:
        """Stored with the run (shown by runs show/list), and a span event when tracing is on."""
        changed = self.runs.save_feedback(message.run_id, message.user, message.verdict, self.clock())
        attributes: dict[str, str | int | bool] = {"agent_runtime.run_id": message.run_id,
                                                   "agent_runtime.verdict": message.verdict,
                                                   "agent_runtime.changed": changed}  # fmt: skip
        with telemetry.span("feedback", attributes):
            pass
        self.log.info("feedback", extra={"verdict": message.verdict, "changed": changed})
        return Outcome.RATED

    def _pane(self, message: PaneMessage) -> Outcome:
        """Slack's pane: an assistant thread is marked as one (with the channel the person looks at beside it);
        opened, it offers the workflow's suggested prompts. Cosmetic: a refusal is logged, never retried."""
        pane = message.event
        if pane.thread_ts is not None:
            self.threads.save_pane(pane.thread_id, {"user": pane.user, "viewing": pane.viewing})
        if pane.kind != "opened" or self.replies.slack is None:
            return Outcome.NOTED
        try:
            slack = self._named(message.workflow).triggers.slack
            if slack is not None and slack.suggested_prompts:
                self.replies.slack.suggest(pane.channel, pane.thread_ts, slack.suggested_prompts)
        except (ReplyError, AgentRuntimeError) as error:  # refused, or the workflow went since it was routed
            self.log.warning("no suggested prompts", extra={"reason": str(error)})
        return Outcome.NOTED

    def _in_pane(self, event: TriggerEvent) -> TriggerEvent:
        """A direct message in an assistant thread the pane opened: said so (its channel titles it), with the
        channel the person has open beside it (the model is told)."""
        pane = self.threads.pane(event.thread_id) if event.attributes.get("direct_message") else None
        if pane is None:
            return event
        facts = {**event.attributes, "assistant_thread": True}
        if pane.get("viewing"):
            facts["viewing"] = pane["viewing"]
        return replace(event, attributes=facts)

    def _workflow(self, event: TriggerEvent) -> Workflow:
        return self._named(str(event.workflow))

    def _named(self, name: str) -> Workflow:
        loaded = load_workflow(name, self.config.workflows_dir, skill_names=self.skills.names())
        return deployed(loaded, self.config)

    def _saved_event(self, run_id: str) -> TriggerEvent:
        saved = self.runs.load_event(run_id)
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
        workflow = self._workflow(event)
        files = StoreFileStore(self.store, thread_partition(event.thread_id))
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
            message = self._message(event, channel, files, first=state is None)
            if state is None:  # the thread's first message names it (where a surface names conversations)
                channel.title(event.text)
        granted = self._granted(event, workflow, channel, run_id) if checkpoint is None else 0.0
        channel.begin()
        hooks: list[Hook] = [ProgressHook(channel.progress, workflow=workflow.name, interval=self.progress_interval)]
        if isinstance(channel, SlackChannel):  # the answer streams into the thread as the model writes it
            hooks.append(AnswerStreamHook(channel.stream))
        if self.queue is not None:
            hooks.append(ContinuationHook(self.queue, thread_id=event.thread_id))
        with self.models(workflow) as model:
            try:
                agent = build_agent(
                    workflow,
                    model,
                    files=files,
                    hooks=hooks,
                    skills=self.skills,
                    config=self.config,
                    runs=self.runs,
                    sandbox=self.sandbox,
                    tool_env=self._tool_env(event),
                    approver=ChannelApprover(self.runs, channel, event.thread_id),
                    clock=self.clock,
                    thread_id=event.thread_id,
                    trace_parent=self.trace_parent,
                    granted=granted,
                )
            except Exception as error:  # a tools section that cannot be built (a listing, a document): apologise
                return self._not_started(event, channel, workflow, run_id, model.name, error, files)
            record = agent.run(message, state=state, deadline=deadline, run_id=run_id)
        self._measure(record)
        waits = record.status in (RunStatus.SUSPENDED, RunStatus.AWAITING_APPROVAL)
        self.threads.mark_active(event.thread_id, record.run_id if waits else None)
        if record.status is RunStatus.AWAITING_APPROVAL:
            channel.waiting(f":raised_hand: Waiting for approval ({record.stop_reason}).")
            self._wake_when_expired(event, run_id, pending(record.state.context) if record.state else {})
            return Outcome.AWAITING_APPROVAL
        if waits:
            channel.progress(STILL_WORKING)
            return Outcome.SUSPENDED
        outcome = self._finish(event, channel, workflow, record, files)
        self.desk.release(event.thread_id, self.queue)  # messages that waited behind an approval
        return outcome

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
        self.log.warning("the run could not start", extra={"error": type(error).__name__})
        record = RunRecord(run_id, workflow.name, model, status=RunStatus.FAILED)
        record.stop_reason = f"the run could not start: {type(error).__name__}: {error}"[:1_000]
        record.event(Failed(error=type(error).__name__))
        record.ended_at = now_iso()
        self.runs.save_record(record, thread_id=event.thread_id)
        self.threads.mark_active(event.thread_id, None)
        outcome = self._finish(event, channel, workflow, record, files)
        self.desk.release(event.thread_id, self.queue)
        return outcome

    def _wake_when_expired(
        self, event: TriggerEvent, run_id: str, waiting: Mapping[str, ApprovalEntry], *, again: bool = False
    ) -> None:
        """A wake-up at the first expiry of the run's ``waiting`` requests, if any. Set once per expiry time (a
        redelivered outcome sets nothing new); ``again``: a new one, the first has fired."""
        if waiting:
            when = min(entry["expires_at"] for entry in waiting.values())
            key = f"{run_id}:{when}" + (f":again:{self.clock()}" if again else "")
            # The key in the body too: the queue deduplicates Scheduler's messages by content for five minutes.
            self.wakeups.at(when + 1, ExpireMessage(run_id, key).body(), group=event.thread_id, key=key)

    def _fresh_state(self, event: TriggerEvent, run_id: str, files: StoreFileStore) -> RunState | None:
        state, version = self.threads.load(event.thread_id)
        # Kept with the run, not in memory: a turn that suspends finishes in another invocation.
        self.runs.save_thread_base(run_id, version, [meta.id for meta in code_files(files)])
        return new_turn(state, run_id)

    def _granted(self, event: TriggerEvent, workflow: Workflow, channel: Channel, run_id: str) -> float:
        """ "continue with $N more" from one of the workflow's approvers (anyone, when it lists none) raises the
        thread's spend limit: N for this run, and N more for the thread today, once per message (the run it
        starts), however often it is delivered."""
        asked = CONTINUE_WITH.search(event.text or "")
        if asked is None or (workflow.limits.max_cost is None and workflow.limits.max_cost_per_thread_day is None):
            return 0.0
        approvers = workflow.tools.approvers
        if approvers and event.user not in approvers:
            channel.tell(event.user, "Only the workflow's approvers can raise its spend limit.")
            return 0.0
        dollars = min(float(asked.group(1)), MAX_GRANT)
        if not dollars > 0:  # "$0 more" grants nothing (and a zero limit would stop the run before it starts)
            return 0.0
        day = time.strftime("%Y-%m-%d", time.gmtime())
        self.threads.raise_spend(event.thread_id, day, dollars, event.user, key=run_id)
        self.log.info("spend limit raised", extra={"dollars": dollars})
        return dollars

    def _tool_env(self, event: TriggerEvent) -> ToolEnv:
        origin = {"source": event.source, **event.reply_to}
        return ToolEnv.from_env(slack=self.replies.slack, jira=self.replies.jira, origin=origin, secrets=self.secrets)

    def _message(self, event: TriggerEvent, channel: Channel, files: StoreFileStore, *, first: bool) -> str:
        earlier = channel.earlier(event) if first else ""
        lead = f"[earlier in this thread]\n{earlier}\n[the message to answer]\n" if earlier else ""
        notes = []
        for attachment in event.attachments:
            try:
                data = channel.download(attachment.url, self.max_attachment_bytes)
                files.put(data, name=attachment.name, mimetype=attachment.mimetype)
            except (ReplyError, AgentRuntimeError) as error:
                notes.append(f"[attachment {attachment.name} could not be added: {error}]")
        if event.attributes.get("viewing"):  # an id Slack gave (checked when it came in), never free text
            notes.append(f"[in Slack, the person has channel <#{event.attributes['viewing']}> open beside this chat]")
        return lead + "\n".join([event.text or "(no text)", *notes])

    def _finish(
        self, event: TriggerEvent, channel: Channel, workflow: Workflow, record: RunRecord, files: StoreFileStore
    ) -> Outcome:
        stopped = (RunStatus.COMPLETED, RunStatus.TOOL_CALL_LIMIT, RunStatus.COST_LIMIT)
        answered = bool(record.final_answer) and record.status in stopped
        text = (
            self._with_footer(record.final_answer or "", workflow) if answered else APOLOGY.format(run_id=record.run_id)
        )
        if answered and record.status is RunStatus.TOOL_CALL_LIMIT:
            text += f"\n\n{CAP_NOTE}"
        elif record.status is RunStatus.COST_LIMIT:  # with or without a last answer: say why it stopped
            cost = describe(record.ledger.breakdown())
            text = (text + "\n\n" if answered else "") + COST_LIMIT_NOTE.format(why=record.stop_reason or "", cost=cost)
        elif answered and record.stop_reason:  # completed, but cut off at the output limit
            text += f"\n\n{CUT_NOTE}"
        base = self.runs.load_thread_base(record.run_id)
        outputs, left_out = self._outputs(base, files) if answered else ([], [])
        if answered and workflow.report.chart:  # how the run used its window, beside its answer
            outputs += _chart(record)
        if left_out:
            text += f"\n\n_Not attached (at most {REPLY_FILES} files, {self.max_attachment_bytes // 2**20} MB): "
            text += ", ".join(left_out) + "_"
        self._reply(channel, record.run_id, text, outputs, rated=answered)
        if record.state is not None:  # every ending: the next message of the thread goes on from this turn
            self._save_thread(event.thread_id, base, record.state)
        if not answered:
            self.log.warning("run did not complete", extra={"status": str(record.status), "reason": record.stop_reason})
        return Outcome.ANSWERED if answered else Outcome.FAILED

    def _with_footer(self, answer: str, workflow: Workflow) -> str:
        footer = answer_footer(workflow, self.config.workflows_url, self.config.workflows_dir, chat=True)
        link = footer.split("<", 1)[1].split("|", 1)[0] if "<" in footer else None
        return answer if link and link in answer else f"{answer}\n\n{footer}"  # the model may have cited it

    def _outputs(self, base: dict[str, Any] | None, files: StoreFileStore) -> tuple[list[tuple[str, bytes]], list[str]]:
        """The files this turn's Python wrote, to attach to the answer, and the names of those left out."""
        if base is None or "files" not in base:
            return [], []  # a run from before files were recorded: which files are new is unknown
        attached: list[tuple[str, bytes]] = []
        left_out: list[str] = []
        total = 0
        for meta in written_since(files, set(base["files"])):
            if len(attached) < REPLY_FILES and total + meta.size_bytes <= self.max_attachment_bytes:
                attached.append((meta.name, files.read(meta.id)))
                total += meta.size_bytes
            else:
                left_out.append(meta.name)
        return attached, left_out

    def _reply(
        self, channel: Channel, run_id: str, text: str, outputs: list[tuple[str, bytes]], *, rated: bool = False
    ) -> None:
        if not self.runs.claim_reply(run_id):
            self.log.warning("reply already being posted by another delivery")
            return
        channel.answer(text, feedback=rated)  # an answer can be rated; an apology cannot
        attached = self._attach(channel, outputs) if outputs else 0
        self.runs.mark_replied(run_id, chars=len(text), files=attached)

    def _attach(self, channel: Channel, outputs: list[tuple[str, bytes]]) -> int:
        """Uploads after the answer; a refused upload is said in the thread, and the answer stands."""
        try:
            return channel.attach(outputs)
        except ReplyError as error:
            self.log.warning("files not attached", extra={"reason": str(error)})
            channel.note(f"(The files could not be attached: {error})")
            return 0

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

    def _measure(self, record: RunRecord) -> None:
        if self.metrics is None:
            return
        usage = record.usage_totals()
        self.metrics.add_metric("Runs", MetricUnit.Count, 1)
        self.metrics.add_metric("Tokens", MetricUnit.Count, usage["total_tokens"])
        self.metrics.add_metric("ToolCalls", MetricUnit.Count, len(record.tool_calls))
        compactions = len(record.events_of(Compaction))
        self.metrics.add_metric("Compactions", MetricUnit.Count, compactions)
        if record.status is RunStatus.FAILED:
            self.metrics.add_metric("RunFailures", MetricUnit.Count, 1)


def _chart(record: RunRecord) -> list[tuple[str, bytes]]:
    from ..chart import run_chart

    try:
        return [(f"{record.run_id}-chart.svg", run_chart(record.to_dict()).encode("utf-8"))]
    except ValueError:  # no model call to draw (an answer replayed from a checkpoint)
        return []
