"""A run's end in its thread: the answer (or the apology) posted once, what the run tells beyond its thread (its
page, the runs channel, metrics), and the thread's state kept for its next turn."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .. import inert
from ..chat.channels import Channel
from ..chat.exceptions import ReplyError
from ..errors import Problem
from ..events import Failed, now_iso
from ..inbound import TriggerEvent
from ..record import RunRecord, RunState, RunStatus
from ..redaction import scrub
from ..stores import StoreFileStore, VersionConflictError
from ..stores.exceptions import InvalidStateError
from ..stores.items import ThreadBase
from ..workflows import Workflow, WorkflowError
from .handlers import Delivery
from .outcome import Outcome


def finish(
    delivery: Delivery[Any],
    event: TriggerEvent,
    channel: Channel,
    workflow: Workflow | None,
    record: RunRecord,
    files: StoreFileStore,
    said: str = "",
) -> Outcome:
    """``workflow``: None when its file cannot be read (the run could not start); ``said``: a line for the person
    under the apology (which key or line of the file)."""
    base = delivery.runs.load_thread_base(record.run_id)
    reports = delivery.reports
    link, private = reports.page(event, record)
    answers = delivery.answers
    answer = answers.compose(record, workflow, base, files, page=link, said=said)
    try:
        answers.post(channel, record.run_id, answer)
    except ReplyError:  # Slack or JIRA out of reach: the claim keeps the answer, the redelivery posts it
        _ended(delivery, event, record, base, (link, private))
        raise  # the queue delivers the message again (answered_already: Answers.post_again)
    _ended(delivery, event, record, base, (link, private))
    if record.status is RunStatus.STOPPED:
        return Outcome.STOPPED
    if not answer.answered:
        delivery.process.log.warning(
            "run did not complete", extra={"status": str(record.status), "reason": record.stop_reason}
        )
    return Outcome.ANSWERED if answer.answered else Outcome.FAILED


def _ended(
    delivery: Delivery[Any],
    event: TriggerEvent,
    record: RunRecord,
    base: ThreadBase | None,
    page: tuple[str | None, bool],
) -> None:
    """What a run's end tells beyond its thread (the runs channel, the metrics), and the thread's state kept — also
    when its answer could not be posted yet: the redelivery that posts it runs no turn."""
    delivery.reports.finished(event, record, *page)
    if record.state is not None:  # every ending: the next message of the thread goes on from this turn
        _save_thread(delivery, event.thread_id, base, record.state)


def not_started(
    delivery: Delivery[Any],
    event: TriggerEvent,
    channel: Channel,
    workflow: Workflow | str,
    run_id: str,
    model: str,
    error: Exception,
    files: StoreFileStore,
) -> Outcome:
    """A run that could not be built still ends in an answer (the apology), a record saying why, and a thread free
    for its next message: never "working" forever, never a message redelivered to the dead-letter queue.
    ``workflow``: its name alone when its file cannot be read (the apology then says which key or line)."""
    name = workflow if isinstance(workflow, str) else workflow.name
    record = RunRecord(run_id, name, model, status=RunStatus.FAILED)
    record.stop_reason = scrub(f"the run could not start: {type(error).__name__}: {error}")[:1_000]
    record.event(Failed(error=type(error).__name__))
    record.ended_at = now_iso()
    delivery.runs.save_record(record, thread_id=event.thread_id)
    delivery.threads.mark_active(event.thread_id, None)
    try:
        told = unreadable(error) if isinstance(error, WorkflowError) else ""
        known = None if isinstance(workflow, str) else workflow
        outcome = finish(delivery, event, channel, known, record, files, told)  # its one log line says why
    except (ReplyError, OSError) as unsaid:  # where the run failed, its apology fails too: the record says why
        said = {"status": str(record.status), "reason": record.stop_reason, "apology": str(unsaid)}
        delivery.process.log.warning("run did not complete", extra=said)
        outcome = Outcome.FAILED
    delivery.desk.release(event.thread_id, delivery.process.queue)
    return outcome


def loaded(delivery: Delivery[Any], event: TriggerEvent, run_id: str, files: StoreFileStore) -> Workflow | Outcome:
    """The event's workflow as its file reads now. A file that cannot be read (edited while serve runs, a key
    misspelt, a bracket left open) is a failed run like any other — the apology with the run's id, a line saying
    which key or line, a record ``runs list`` shows — never a message dropped with a traceback, nor one redelivered
    until the dead-letter queue takes it."""
    try:
        return delivery.process.workflow(str(event.workflow))
    except WorkflowError as error:
        channel = delivery.channel(event, run_id)
        model = delivery.process.config.model_override or "-"
        return not_started(delivery, event, channel, str(event.workflow), run_id, model, error, files)


def unreadable(error: WorkflowError) -> str:
    """The file's first problem, as the person who asked can read it (the file's name, not the deployment's path)."""
    first = error.problems[0] if error.problems else Problem("", "(file)", str(error))
    more = f" (and {len(error.problems) - 1} more)" if len(error.problems) > 1 else ""
    where = Path(first.file).name or "the workflow file"
    return inert.mrkdwn(scrub(f"The workflow file {where} cannot be read: {first.key}: {first.why}{more}")[:500])


def _save_thread(delivery: Delivery[Any], thread_id: str, base: ThreadBase | None, state: RunState) -> None:
    """Saved over the version the turn started from, so a turn that finished meanwhile is never overwritten.

    Turns of one thread are serialised (FIFO group; a new turn waits behind a suspended one), so a conflict means
    an out-of-band writer; the answer is already posted, only this turn's memory is not kept."""
    threads = delivery.threads
    version = base.version if base is not None else threads.load(thread_id)[1]
    try:
        threads.save(thread_id, state, expected_version=version)
    except VersionConflictError:
        delivery.process.log.warning("thread saved by another turn since this one started; this turn's state not kept")
    except InvalidStateError as error:
        delivery.process.log.warning("invalid turn state; the thread keeps its previous one", extra={"why": str(error)})
