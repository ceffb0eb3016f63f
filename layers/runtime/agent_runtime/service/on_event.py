"""A new event (a Slack message or reaction, a JIRA comment, a webhook, the /runs API) and a schedule's tick:
a new turn of its thread — unless it was answered already, or must wait behind the thread's turn under way."""

from __future__ import annotations

from dataclasses import replace

from ..inbound import TriggerEvent, run_id_for
from ..triggers.queued import EventMessage, TickMessage
from . import turn
from .handlers import Delivery, handles
from .inputs import ticked
from .outcome import Outcome


@handles(EventMessage)
def on_event(delivery: Delivery[EventMessage]) -> Outcome:
    event, run_id = delivery.pane.framed(delivery.message.event), run_id_for(delivery.message.event)
    delivery.runs.save_event(run_id, event)
    delivery.about(event, run_id)
    if delivery.runs.reply_state(run_id) is not None:
        return turn.answered_already(delivery, event, run_id)
    deferred = _behind_active_run(delivery, event, run_id)
    return deferred or turn.run_turn(delivery, event, run_id, continuation=False)


@handles(TickMessage)
def on_tick(delivery: Delivery[TickMessage]) -> Outcome:
    event = ticked(delivery.message, delivery.process.workflow)
    if event is None:
        return Outcome.IGNORED  # a schedule the workflow no longer has (a tick sent before a deploy)
    return on_event(replace(delivery, message=event))  # type: ignore[arg-type]


def _behind_active_run(delivery: Delivery[EventMessage], event: TriggerEvent, run_id: str) -> Outcome | None:
    """A thread's turns run in order: a new turn waits behind a suspended one (queued again after its
    continuation, in the thread's message group), instead of answering without it and racing its save. Behind a
    run that awaits approval: a JIRA "approve"/"deny" is the decision; an expired request resumes that run first;
    anything else waits with the thread until the decision."""
    process = delivery.process
    other = delivery.threads.active(event.thread_id)
    if not other or other == run_id:
        return None
    desk = delivery.desk
    waiting = desk.waiting(other)
    if waiting is not None:

        def resume(owner: TriggerEvent, run: str) -> Outcome:
            return turn.run_turn(delivery, owner, run, continuation=False)

        return desk.behind(event, delivery.body, other, waiting, resume)
    if process.queue is None:
        return None
    process.queue.send(delivery.body, group=event.thread_id, dedup=f"{event.dedup_key}:after:{other}")
    process.log.info("deferred behind a suspended run", extra={"active_run": other})
    return Outcome.DEFERRED
