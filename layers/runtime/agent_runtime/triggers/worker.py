"""The worker: one queue message → load the thread, run the workflow, persist, reply exactly once.

Run ids come from the event's dedup key, so a redelivered message finds its run's checkpoint and resumes it (or
sees the reply already posted) instead of starting again. The reply is journalled (posting → posted) in the
run's partition: a redelivery never posts twice; a crash between the two marks leaves at most no reply, logged.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from ..config import RuntimeConfig
from ..continuation import ContinuationHook, count_continuation
from ..deadline import Deadline
from ..errors import AgentRuntimeError
from ..models import Model
from ..record import RunRecord, RunState, RunStatus
from ..runtime import build_agent, workflow_line
from ..sandbox import SandboxClient
from ..sandbox.outputs import code_files, written_since
from ..skills import SkillLibrary
from ..stores import RunStore, Store, StoreFileStore, ThreadStore, VersionConflictError
from ..stores.exceptions import InvalidStateError
from ..stores.hook import new_turn
from ..stores.runs import run_partition, thread_partition
from ..workflows import Workflow, load_workflow
from .event import TriggerEvent
from .exceptions import ReplyError
from .progress import ProgressHook
from .queue import EventQueue
from .replies import JiraReplier, SlackReplier

REPLY_FILES = 5  # files the turn's Python wrote, attached to the answer (within max_attachment_bytes in all)
# run item: the thread version the turn started from (its save must not skip a newer one) and the files it had
THREAD_BASE = "thread-base"
APOLOGY = "Sorry — I could not finish this one. If you report it, quote run `{run_id}`."
CUT_NOTE = "_This answer was cut off at the model's output limit._"
CAP_NOTE = "_Stopped at the workflow's limit of tool calls: this answer may be incomplete._"


@dataclass
class Replies:
    slack: SlackReplier | None = None
    jira: JiraReplier | None = None


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
    ) -> None:
        self.config, self.store, self.queue, self.models, self.replies = config, store, queue, models, replies
        self.sandbox, self.max_attachment_bytes, self.progress_interval = (
            sandbox,
            max_attachment_bytes,
            progress_interval,
        )
        self.log = logger or Logger(service="agent-runtime-worker")
        self.metrics = metrics
        self.runs, self.threads = RunStore(store), ThreadStore(store)
        self.skills = SkillLibrary(config.skills_dir)

    def handle(self, message: dict[str, Any], *, deadline: Deadline) -> str:
        """Process one message; returns what happened (answered, suspended, duplicate, failed)."""
        if message["type"] == "event":
            event = TriggerEvent.from_dict(message["event"])
            run_id = run_id_for(event)
            self.store.put_latest(run_partition(run_id), "event", event.to_dict(), ttl=self.runs.ttl)
        elif message["type"] == "continue":
            run_id = str(message["run_id"])
            item = self.store.get_item(run_partition(run_id), "event")
            if item is None:
                raise ValueError(f"continuation of unknown run {run_id}")
            event = TriggerEvent.from_dict(item.data)
        else:
            raise ValueError(f"unknown message type {message['type']!r}")
        self.log.set_correlation_id(event.correlation_id)
        self.log.append_keys(run_id=run_id, workflow=event.workflow, source=event.source)
        if self._reply_state(run_id) is not None:
            self.log.info("duplicate delivery: already answered")
            return "duplicate"
        if message["type"] == "event" and self._defer_behind_active_run(event, run_id, message):
            return "deferred"
        return self._run(event, run_id, continuation=message["type"] == "continue", deadline=deadline)

    def _defer_behind_active_run(self, event: TriggerEvent, run_id: str, message: dict[str, Any]) -> bool:
        """A thread's turns run in order: a new turn waits behind a suspended one (queued again after its
        continuation, in the thread's message group), instead of answering without it and racing its save."""
        other = self.threads.active(event.thread_id)
        if not other or other == run_id or self.queue is None:
            return False
        self.queue.send(message, group=event.thread_id, dedup=f"{event.dedup_key}:after:{other}")
        self.log.info("deferred behind a suspended run", extra={"active_run": other})
        return True

    def _run(self, event: TriggerEvent, run_id: str, *, continuation: bool, deadline: Deadline) -> str:
        workflow = load_workflow(str(event.workflow), self.config.workflows_dir, skill_names=self.skills.names())
        files = StoreFileStore(self.store, thread_partition(event.thread_id))
        checkpoint = self.runs.load_checkpoint(run_id)
        message: str | None = None
        if checkpoint is not None:
            state = checkpoint[0]
            if continuation:
                count_continuation(state.context)
        else:
            state, message = self._fresh_state(event, run_id, files), self._message(event, files)
        progress = self._progress(event, run_id)
        hooks = [ProgressHook(progress, workflow=workflow.name, interval=self.progress_interval)]
        if self.queue is not None:
            hooks.append(ContinuationHook(self.queue, thread_id=event.thread_id))
        with self.models(workflow) as model:
            agent = build_agent(
                workflow,
                model,
                files=files,
                hooks=hooks,
                skills=self.skills,
                config=self.config,
                runs=self.runs,
                sandbox=self.sandbox,
            )
            record = agent.run(message, state=state, deadline=deadline, run_id=run_id)
        self._measure(record)
        active = record.run_id if record.status is RunStatus.SUSPENDED else None
        self.threads.mark_active(event.thread_id, active)
        if active:
            progress(":hourglass_flowing_sand: Still working — this one takes longer; I will answer here.")
            return "suspended"
        return self._finish(event, workflow, record, files)

    def _fresh_state(self, event: TriggerEvent, run_id: str, files: StoreFileStore) -> RunState | None:
        state, version = self.threads.load(event.thread_id)
        # Kept with the run, not in memory: a turn that suspends finishes in another invocation.
        base = {"version": version, "files": [meta.id for meta in code_files(files)]}
        self.store.put_latest(run_partition(run_id), THREAD_BASE, base, ttl=self.runs.ttl)
        return new_turn(state, run_id)

    def _message(self, event: TriggerEvent, files: StoreFileStore) -> str:
        notes = []
        for attachment in event.attachments:
            try:
                data = self._download(event, attachment.url)
                files.put(data, name=attachment.name, mimetype=attachment.mimetype)
            except (ReplyError, AgentRuntimeError) as error:
                notes.append(f"[attachment {attachment.name} could not be added: {error}]")
        return "\n".join([event.text or "(no text)", *notes])

    def _download(self, event: TriggerEvent, url: str) -> bytes:
        client = self.replies.slack if event.source == "slack" else self.replies.jira
        if client is None:
            raise ReplyError(f"no {event.source} credentials to download attachments")
        return client.download(url, self.max_attachment_bytes)

    def _progress(self, event: TriggerEvent, run_id: str) -> Callable[[str], None]:
        slack, target = self.replies.slack, event.reply_to
        if event.source != "slack" or slack is None:
            return lambda text: None
        partition = run_partition(run_id)
        item = self.store.get_item(partition, "progress")
        if item is None:
            ts = slack.post(target["channel"], target["thread_ts"], ":hourglass_flowing_sand: Working on it…")
            self.store.put_latest(partition, "progress", {"ts": ts}, ttl=self.runs.ttl)
        else:
            ts = item.data["ts"]
        return lambda text: slack.update(target["channel"], ts, text)

    def _finish(self, event: TriggerEvent, workflow: Workflow, record: RunRecord, files: StoreFileStore) -> str:
        answered = bool(record.final_answer) and record.status in (RunStatus.COMPLETED, RunStatus.TOOL_CALL_LIMIT)
        text = (
            self._with_footer(record.final_answer or "", workflow) if answered else APOLOGY.format(run_id=record.run_id)
        )
        if answered and record.status is RunStatus.TOOL_CALL_LIMIT:
            text += f"\n\n{CAP_NOTE}"
        elif answered and record.stop_reason:  # completed, but cut off at the output limit
            text += f"\n\n{CUT_NOTE}"
        item = self.store.get_item(run_partition(record.run_id), THREAD_BASE)
        base = item.data if item is not None else None
        outputs, left_out = self._outputs(base, files) if answered else ([], [])
        if left_out:
            text += f"\n\n_Not attached (at most {REPLY_FILES} files, {self.max_attachment_bytes // 2**20} MB): "
            text += ", ".join(left_out) + "_"
        self._reply(event, record.run_id, text, outputs)
        if record.state is not None:  # every ending: the next message of the thread goes on from this turn
            self._save_thread(event.thread_id, base, record.state)
        if not answered:
            self.log.warning("run did not complete", extra={"status": str(record.status), "reason": record.stop_reason})
        return "answered" if answered else "failed"

    def _with_footer(self, answer: str, workflow: Workflow) -> str:
        line = workflow_line(workflow, self.config.workflows_url, self.config.workflows_dir)
        link = line.split(" — prompt: ", 1)[1] if " — prompt: " in line else None
        if link is None or link in answer:
            return answer
        return f"{answer}\n\n_Answered by the <{link}|{workflow.name} workflow>_"

    def _reply_state(self, run_id: str) -> str | None:
        item = self.store.get_item(run_partition(run_id), "reply")
        return None if item is None else str(item.data.get("state"))

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

    def _reply(self, event: TriggerEvent, run_id: str, text: str, outputs: list[tuple[str, bytes]]) -> None:
        partition = run_partition(run_id)
        try:
            self.store.put_item(partition, "reply", {"state": "posting"}, expected_version=None, ttl=self.runs.ttl)
        except VersionConflictError:
            self.log.warning("reply already being posted by another delivery")
            return
        if event.source == "slack" and self.replies.slack is not None:
            progress = self.store.get_item(partition, "progress")
            target = event.reply_to
            self.replies.slack.answer(target["channel"], target["thread_ts"], progress and progress.data["ts"], text)
        elif event.source == "jira" and self.replies.jira is not None:
            self.replies.jira.comment(event.reply_to["issue_key"], text)
        attached = self._attach(event, outputs) if outputs else 0
        state = {"state": "posted", "chars": len(text), "files": attached}
        self.store.put_latest(partition, "reply", state, ttl=self.runs.ttl)

    def _attach(self, event: TriggerEvent, outputs: list[tuple[str, bytes]]) -> int:
        """Uploads after the answer; a refused upload is said in the thread, and the answer stands."""
        slack, jira, target = self.replies.slack, self.replies.jira, event.reply_to
        try:
            if event.source == "slack" and slack is not None:
                slack.upload(target["channel"], target["thread_ts"], outputs)
            elif event.source == "jira" and jira is not None:
                jira.attach(target["issue_key"], outputs)
            else:
                return 0
            return len(outputs)
        except ReplyError as error:
            self.log.warning("files not attached", extra={"reason": str(error)})
            note = f"(The files could not be attached: {error})"
            if slack is not None and event.source == "slack":
                slack.post(target["channel"], target["thread_ts"], note)
            elif jira is not None:
                jira.comment(target["issue_key"], note)
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
        compactions = sum(1 for e in record.events if e.get("type") == "compaction")
        self.metrics.add_metric("Compactions", MetricUnit.Count, compactions)
        if record.status is RunStatus.FAILED:
            self.metrics.add_metric("RunFailures", MetricUnit.Count, 1)


def run_id_for(event: TriggerEvent) -> str:
    return "run-" + hashlib.sha256(event.dedup_key.encode()).hexdigest()[:24]
