"""A run's end in its thread: the answer (or the apology) posted once, what the run tells beyond its thread (its
page, the runs channel, metrics), and the thread's state kept for its next turn."""

from __future__ import annotations

from typing import Any

from ..chat.channels import Channel
from ..chat.exceptions import ReplyError
from ..events import Failed, now_iso
from ..record import RunRecord, RunState, RunStatus
from ..redaction import scrub
from ..stores import StoreFileStore, VersionConflictError
from ..stores.exceptions import InvalidStateError
from ..stores.items import ThreadBase
from ..triggers.event import TriggerEvent
from ..workflows import Workflow
from .handlers import Delivery
from .outcome import Outcome


def finish(
    delivery: Delivery[Any],
    event: TriggerEvent,
    channel: Channel,
    workflow: Workflow,
    record: RunRecord,
    files: StoreFileStore,
) -> Outcome:
    base = delivery.runs.load_thread_base(record.run_id)
    reports = delivery.reports
    link, private = reports.page(event, record)
    answers = delivery.answers
    answer = answers.compose(record, workflow, base, files, page=link)
    answers.post(channel, record.run_id, answer)
    reports.finished(event, record, link, private)  # the runs channel, the metrics
    if record.state is not None:  # every ending: the next message of the thread goes on from this turn
        _save_thread(delivery, event.thread_id, base, record.state)
    if record.status is RunStatus.STOPPED:
        return Outcome.STOPPED
    if not answer.answered:
        delivery.process.log.warning(
            "run did not complete", extra={"status": str(record.status), "reason": record.stop_reason}
        )
    return Outcome.ANSWERED if answer.answered else Outcome.FAILED


def not_started(
    delivery: Delivery[Any],
    event: TriggerEvent,
    channel: Channel,
    workflow: Workflow,
    run_id: str,
    model: str,
    error: Exception,
    files: StoreFileStore,
) -> Outcome:
    """A run that could not be built still ends in an answer (the apology), a record saying why, and a thread free
    for its next message: never "working" forever, never a message redelivered to the dead-letter queue."""
    record = RunRecord(run_id, workflow.name, model, status=RunStatus.FAILED)
    record.stop_reason = scrub(f"the run could not start: {type(error).__name__}: {error}")[:1_000]
    record.event(Failed(error=type(error).__name__))
    record.ended_at = now_iso()
    delivery.runs.save_record(record, thread_id=event.thread_id)
    delivery.threads.mark_active(event.thread_id, None)
    try:
        outcome = finish(delivery, event, channel, workflow, record, files)  # its one log line says why
    except (ReplyError, OSError) as unsaid:  # where the run failed, its apology fails too: the record says why
        said = {"status": str(record.status), "reason": record.stop_reason, "apology": str(unsaid)}
        delivery.process.log.warning("run did not complete", extra=said)
        outcome = Outcome.FAILED
    delivery.desk.release(event.thread_id, delivery.process.queue)
    return outcome


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
