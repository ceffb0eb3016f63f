"""Approvals in chat: the approver a worker run uses, and the decisions that come back from Slack and JIRA.

A run that needs a decision posts the question once (a redelivery finds it asked) and waits, checkpointed; the
decision is stored with the run (the first one wins: a second click is a no-op) and the run is resumed.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from typing import TYPE_CHECKING, Any

from ..approvals import APPROVALS, ApprovalRequest, Decision
from ..approvals.gate import ApprovalEntry
from ..chat.channels import Channel
from ..chat.exceptions import ReplyError
from ..identity import CONNECTIONS
from ..inbound import TriggerEvent, run_id_for
from ..messages import pending_tool_calls
from ..record import RunRecord
from ..sources import Sources
from ..stores import RunStore, ThreadStore
from ..stores.items import Decided
from ..triggers.queued import DecisionMessage, ExpireMessage
from .outcome import Outcome

if TYPE_CHECKING:
    from ..triggers.queue import EventQueue
    from .wakeups import Wakeups

EXPIRED_CLICK = "This request had expired before your answer: nothing was decided, and the call did not run."
CLOSED = "closed"  # a request its run's end settled (a stop, an answer): stored like a decision, decides nothing
CLOSED_CLICK = (
    "This request was closed when its run ended, before your answer: nothing was decided, and the call did not run."
)
LATE_CLICK = {"expired": EXPIRED_CLICK, CLOSED: CLOSED_CLICK}
WHICH = "Several requests wait for a decision here: answer with the code of the one you mean, e.g. approve {code}."


class ChannelApprover:
    """Decides from the run's stored decision; asks in the run's channel when there is none yet."""

    def __init__(self, runs: RunStore, channel: Channel, thread_id: str) -> None:
        self.runs, self.channel, self.thread_id = runs, channel, thread_id

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        decided = self.runs.decision(request.run_id, request.call_id)
        if decided is not None and decided.decision == CLOSED:  # its run had ended: nobody said yes
            return Decision.DENIED, "nobody: the request was closed when its run ended"
        if decided is not None:
            return Decision(decided.decision), decided.by
        if self.runs.approval_asked(request.run_id, request.call_id) is None:
            try:
                where = self.channel.ask_approval(request, self.thread_id)
            except ReplyError:
                where = None
            if where is None:  # no chat to ask in (a run started by name): nobody can say yes
                return Decision.DENIED, f"nobody: the approval could not be asked in {self.channel.name}"
            self.runs.save_approval_asked(request.run_id, request.call_id, where)
        return Decision.PENDING, None


def may_decide(approvers: Sequence[str], user: str, requester: str) -> bool:
    """Empty list: anyone in the conversation; "requester": whoever started the run; else the listed ids."""
    if not approvers:
        return True
    return user in approvers or ("requester" in approvers and user == requester)


def request_code(run_id: str, call_id: str) -> str:
    return ApprovalRequest(run_id, call_id, "", "", "", 0.0).code


def decision_record(decision: str, user: str) -> Decided:
    return Decided(decision, user, time.time())


def pending(context: Mapping[str, Any]) -> dict[str, ApprovalEntry]:
    """The calls that wait for a person, from a run state's context: a decision, or their connection to a provider
    (``identity``: a call waits for one at a time, approved first)."""
    waiting = {call: entry for call, entry in APPROVALS.get(context).items() if entry["status"] == Decision.PENDING}
    connecting = CONNECTIONS.get(context).items()
    return waiting | {call: entry for call, entry in connecting if entry["status"] == Decision.PENDING}


class ApprovalDesk:
    """The worker's side of approvals: decisions recorded (or refused), messages that wait behind a decision."""

    def __init__(
        self,
        runs: RunStore,
        threads: ThreadStore,
        channel: Callable[[TriggerEvent, str], Channel],
        approvers: Callable[[TriggerEvent], Sequence[str]],
        clock: Callable[[], float],
        *,
        sources: Sources,
        decides: Callable[[TriggerEvent, str], bool] | None = None,
    ) -> None:
        self.runs, self.threads, self.channel, self.approvers, self.clock = runs, threads, channel, approvers, clock
        self.sources = sources  # a decision said in a message (a JIRA comment "approve")
        self.decides = decides  # who may decide (tools.approvers and access.approve); None: approvers alone

    def waiting(self, run_id: str) -> dict[str, ApprovalEntry] | None:
        """The calls of ``run_id`` that wait for a decision (from its checkpoint), or None when it waits for none."""
        checkpoint = self.runs.load_checkpoint(run_id)
        return (pending(checkpoint[0].context) or None) if checkpoint is not None else None

    def record(self, event: TriggerEvent, decision: DecisionMessage) -> Outcome | None:
        """Store a decision (the first wins) and show it; an Outcome when the run must not resume for it."""
        channel = self.channel(event, decision.run_id)
        allowed = (
            self.decides(event, decision.user)
            if self.decides is not None
            else may_decide(self.approvers(event), decision.user, event.user)
        )
        if not allowed:
            channel.tell(decision.user, "Only the workflow's approvers can decide this request.")
            return Outcome.REFUSED
        asked = self.runs.approval_asked(decision.run_id, decision.call_id)
        if asked is None:
            return Outcome.DUPLICATE  # never asked: a forged id
        waiting = self.waiting(decision.run_id) or {}
        entry = waiting.get(decision.call_id)
        if entry is not None and entry["expires_at"] <= self.clock():  # a click after the deadline decides nothing
            self.expire(event, decision.run_id, {decision.call_id: entry})
            channel.tell(decision.user, EXPIRED_CLICK)
            return None  # the run goes on: the model is told the request expired
        if not self.runs.save_decision(
            decision.run_id, decision.call_id, decision_record(decision.decision, decision.user)
        ):
            # Decided already: a second click, or this decision delivered again after an invocation died before
            # its run went on. The run's checkpoint says which: a call it still waits for resumes it (once: its
            # checkpoint moves on, and a mutating call's journal never runs it twice).
            unfinished = decision.call_id in waiting or self._started(decision.run_id, decision.call_id)
            return None if unfinished else self.late(event, decision)
        tool = waiting[decision.call_id]["tool"] if decision.call_id in waiting else "the call"
        channel.approval_decided(asked, tool, decision.decision, decision.user)
        return None

    def behind(
        self,
        event: TriggerEvent,
        message: dict[str, Any],
        other: str,
        waiting: dict[str, ApprovalEntry],
        resume: Callable[[TriggerEvent, str], Outcome],
    ) -> Outcome | None:
        """A new message in a thread whose run waits for approval."""
        owner = self.runs.load_event(other) or event
        said = self.sources.of(event).decision(event)
        if said is not None:
            decision, code = said
            codes = {request_code(other, call): call for call in waiting}
            call = codes.get(code or "") or (next(iter(waiting)) if len(waiting) == 1 and code is None else None)
            if call is None:  # which one it answers is not said: deciding the oldest could decide the wrong one
                self.channel(owner, other).tell(event.user, WHICH.format(code=next(iter(codes))))
                return Outcome.REFUSED
            refused = self.record(owner, DecisionMessage(other, call, decision, event.user))
            return refused or resume(owner, other)
        if all(entry["expires_at"] <= self.clock() for entry in waiting.values()):
            self.expire(owner, other, waiting)
            resume(owner, other)  # the request expired: that run goes on (the model is told), then this message
            return None if self.threads.active(event.thread_id) is None else self._wait(event, message)
        return self._wait(event, message)

    def expire(self, event: TriggerEvent, run_id: str, waiting: Mapping[str, ApprovalEntry]) -> bool:
        """Settle the run's ``waiting`` requests whose time is up (stored like a decision, so a late click finds it
        decided) and show it where each was asked. True when any was due."""
        now, channel = self.clock(), self.channel(event, run_id)
        due = {call: entry for call, entry in waiting.items() if entry["expires_at"] <= now}
        for call_id, entry in due.items():
            asked = self.runs.approval_asked(run_id, call_id)
            if asked is not None and self.runs.save_decision(run_id, call_id, decision_record("expired", "")):
                channel.approval_decided(asked, entry["tool"], "expired", "")
        return bool(due)

    def close(self, event: TriggerEvent, record: RunRecord) -> None:
        """The run ended (it answered, failed, or was stopped while it waited): every request it still waited on is
        closed — stored like a decision, so a late click finds it decided and is told why — and shown closed where
        it was asked (its buttons go)."""
        waiting = pending(record.state.context) if record.state is not None else {}
        for call_id, entry in waiting.items():
            asked = self.runs.approval_asked(record.run_id, call_id)
            if asked is None or not self.runs.save_decision(record.run_id, call_id, decision_record(CLOSED, "")):
                continue  # never asked, or decided meanwhile
            with suppress(ReplyError):  # the request is closed all the same: a click on it is told so
                self.channel(event, record.run_id).approval_decided(asked, entry["tool"], CLOSED, "")

    def late(self, event: TriggerEvent, decision: DecisionMessage) -> Outcome:
        """A click on a request settled without it (expired, or closed when its run ended): the clicker is told
        why, privately; a second click on one decided by a person changes nothing, silently."""
        decided = self.runs.decision(decision.run_id, decision.call_id)
        said = LATE_CLICK.get(decided.decision) if decided is not None else None
        if said is not None:
            self.channel(event, decision.run_id).tell(decision.user, said)
        return Outcome.DUPLICATE

    def _wait(self, event: TriggerEvent, message: dict[str, Any]) -> Outcome:
        self.threads.defer(event.thread_id, message)
        self.channel(event, run_id_for(event)).note("I will answer this once the request above is decided.")
        return Outcome.DEFERRED

    def _started(self, run_id: str, call_id: str) -> bool:
        """The approved call is still unanswered in the run's checkpoint: the worker died inside it (its journal
        says it started). The run resumes and reports the call's outcome as unknown, never running it again."""
        checkpoint = self.runs.load_checkpoint(run_id)
        pending = pending_tool_calls(checkpoint[0].messages) if checkpoint is not None else []
        return any(call["id"] == call_id for call in pending)

    def release(self, thread_id: str, queue: EventQueue | None) -> None:
        """Messages that waited behind an approval go back to the queue, in order, once the run has ended; each is
        forgotten only once sent (a failed send keeps it for the next release), under a dedup id of its own so a
        release repeated after a crash sends none twice."""
        if queue is None:
            return
        messages = self.threads.deferred(thread_id)
        for message in messages:
            digest = hashlib.sha256(json.dumps(message, sort_keys=True).encode()).hexdigest()[:32]
            queue.send(dict(message), group=thread_id, dedup=f"{thread_id}:released:{digest}")
        self.threads.drop_deferred(thread_id, len(messages))


def wake_when_expired(
    wakeups: Wakeups,
    event: TriggerEvent,
    run_id: str,
    waiting: Mapping[str, ApprovalEntry],
    now: float,
    *,
    again: bool = False,
) -> None:
    """A wake-up at the first expiry of the run's ``waiting`` requests, if any. Set once per expiry time (a
    redelivered outcome sets nothing new); ``again``: a new one, the first has fired."""
    if waiting:
        when = min(entry["expires_at"] for entry in waiting.values())
        key = f"{run_id}:{when}" + (f":again:{now}" if again else "")
        # The key in the body too: the queue deduplicates Scheduler's messages by content for five minutes.
        wakeups.at(when + 1, ExpireMessage(run_id, key).body(), group=event.thread_id, key=key)
