"""Stop requests in the worker: who may stop a run, and what a stop does to a run that is not working now.

A Stop click (or "stop" written in the thread, the pane's way: the thread's newest run) comes in a message group
of its own (the run it stops holds its thread's group while it works). The one who asked or one of the
workflow's approvers may stop it (an authenticated /runs API caller too); anyone else is told so and nothing
changes, like a stale click on a run that has answered. The request is written with the run (the first wins); the
working run sees it at its next step. A run that is not working — waiting for an
approval, or suspended between invocations — gets a continuation in its thread's group, which ends it at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from aws_lambda_powertools import Logger

from ..chat.channels import Channel
from ..sources import Sources
from ..stopping import StopRequest
from ..stores import RunStore, ThreadStore
from ..triggers.event import TriggerEvent
from ..triggers.queue import EventQueue
from ..triggers.queued import ContinueMessage, StopMessage
from .outcome import Outcome

NOT_YOURS = "Only the person who asked or one of this workflow's approvers can stop this run."
NOTHING = "Nothing is working in this thread: there is nothing to stop."


class Stops:
    def __init__(
        self,
        runs: RunStore,
        threads: ThreadStore,
        *,
        approvers: Callable[[TriggerEvent], Sequence[str]],
        channel: Callable[[TriggerEvent, str], Channel],
        queue: EventQueue | None,
        log: Logger,
        clock: Callable[[], float],
        sources: Sources,
    ) -> None:
        self.runs, self.threads, self.approvers, self.channel, self.queue, self.log, self.clock = (
            runs, threads, approvers, channel, queue, log, clock,
        )  # fmt: skip
        self.sources = sources  # where a run answers when not in its own thread; a run that starts apart

    def started(self, event: TriggerEvent, run_id: str) -> None:
        """Name the run as its thread's newest, so "stop" written there finds it. A reaction's run keeps a thread
        of its own (one per message and emoji) but answers in the message's Slack thread: it is named there too."""
        self.threads.mark_latest(event.thread_id, run_id)
        answered = self.sources.of(event).answers_in(event)
        if answered is not None and answered != event.thread_id:
            self.threads.mark_latest(answered, run_id)

    def said(self, message: StopMessage) -> Outcome:
        """ "stop" written in a thread: the run working there is asked to stop, as a click on its Stop would."""
        said = message.said
        if said is None:
            return Outcome.IGNORED
        run_id = self.threads.latest(said.thread_id)
        saved = self.runs.load_event(run_id) if run_id else None
        if run_id and saved is not None:
            outcome = self.asked(replace(message, run_id=run_id, said=None), saved)
            if outcome is not Outcome.IGNORED:  # IGNORED: it has answered, so nothing works there
                return outcome
        self.channel(said, "").tell(message.user, NOTHING)
        return Outcome.IGNORED

    def asked(self, message: StopMessage, event: TriggerEvent) -> Outcome:
        if self.runs.reply_state(message.run_id) is not None:
            self.log.info("stop of a run that has answered: nothing to do")
            return Outcome.IGNORED
        if not self._may_stop(message, event):
            self.channel(event, message.run_id).tell(message.user, NOT_YOURS)
            return Outcome.REFUSED
        request = StopRequest(message.user, self.clock(), message.via)
        if not self.runs.request_stop(message.run_id, request):
            return Outcome.DUPLICATE
        self.log.info("stop requested", extra={"via": message.via})
        # A tick's run first works outside its thread's message group (Scheduler's group is the schedule's): a
        # continuation would run beside it, so it is woken only when it waits or is suspended.
        elsewhere = self.sources.of(event).starts_apart and self.threads.active(event.thread_id) != message.run_id
        if self.queue is not None and not elsewhere:
            wake_to_end(self.queue, message.run_id, event.thread_id)
        return Outcome.STOPPED

    def _may_stop(self, message: StopMessage, event: TriggerEvent) -> bool:
        if message.via == "api":  # the route checked the caller's key or IAM identity
            return True
        return message.user == event.user or message.user in self.approvers(event)


def wake_to_end(queue: EventQueue, run_id: str, thread_id: str) -> None:
    """A run not working now (waiting for an approval, suspended) is ended by a continuation in its thread's
    group: it reads the stop request first. Sent once per run however often a stop is asked."""
    queue.send(ContinueMessage(run_id, thread_id, 0).body(), group=thread_id, dedup=f"{run_id}:stop")
