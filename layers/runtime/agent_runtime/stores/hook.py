"""Durability as a hook: a checkpoint after every step, the record at the end, and exactly-once mutating tools.

A mutating call is journalled as *started* (and checkpointed) before it runs and as *done* with its result
after. A resumed run replays a done call's result instead of running it again, and answers a call that started
but never finished with an explicit "outcome unknown" error, so nothing is ever done twice.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, NotRequired, TypedDict

from .. import messages as msgs
from ..approvals.gate import arguments_hash, binds
from ..events import MutationReplayed, MutationUnknown
from ..hooks import Hook
from ..models import ToolCall
from ..record import RunRecord, RunState
from ..spend import GRANTED, SPENT, Ledger
from ..state import Slot
from ..tools import ToolOutcome, error_text
from .exceptions import StoreError, VersionConflictError
from .runs import RunStore, ThreadStore

if TYPE_CHECKING:
    from ..steps import Run


class JournalEntry(TypedDict):
    status: str  # started | done
    tool: str
    arguments_sha256: NotRequired[str]  # what the call was (entries of older runs have none)
    result: NotRequired[str]
    is_error: NotRequired[bool]


# Mutating calls by call id, for the thread's life: ids are never given to two calls of a thread (loop/_turns.py mints
# them past every key here), so an entry answers only its own call, in this turn or a later one resuming it.
JOURNAL: Slot[dict[str, JournalEntry]] = Slot("mutations", dict, owner=__name__)
VERSION: Slot[int | None] = Slot("checkpoint_version", lambda: None, owner=__name__)  # of the last checkpoint
# This invocation's model and tool calls so far (its record's entries: no payloads), named by its start: a process
# killed before it saved its record leaves them in its last checkpoint, with the ledger's spend (``SPENT``), so
# the record that closes the run (``runs stop``, a resumed run) keeps what it spent.
SO_FAR: Slot[dict[str, Any]] = Slot("invocation_so_far", dict, owner=__name__)
REUSED = "not run: this {tool} call reuses the id of another call already made in this run; call it again."
UNKNOWN = (
    "the outcome of this {tool} call is unknown: it started before an interruption and may or may not have taken "
    "effect. It was not run again; check its effect before retrying."
)
NOT_KEPT = "the result of this {tool} call was not kept: the turn was interrupted. Call it again if it is still needed."


def settled(state: RunState) -> RunState:
    """A killed turn's last checkpoint with every call answered, so a new message can follow it: a mutating call
    from its journal (its result if it finished, else that its outcome is unknown), any other as not run."""
    journal = JOURNAL.get(state.context)
    for call in msgs.pending_tool_calls(state.messages):
        entry, tool = journal.get(call["id"]), call["function"]["name"]
        if entry is not None and entry["status"] == "done":
            content = entry.get("result", "")
        else:
            content = error_text(UNKNOWN.format(tool=tool) if entry is not None else NOT_KEPT.format(tool=tool))
        state.messages.append(msgs.tool_result(call["id"], content))
    return state


def unfinished(threads: ThreadStore, runs: RunStore, thread_id: str) -> RunState | None:
    """The last checkpoint of a thread's turn that never ended (its process was killed), to go on from: the calls it
    left without a result are answered (``settled``), so the next message follows a whole history."""
    run_id = threads.active(thread_id)
    saved = runs.load_checkpoint(run_id) if run_id else None
    return None if saved is None else settled(saved[0])


def kept_so_far(record: RunRecord, state: RunState) -> None:
    """What the invocation that started at ``record.started_at`` had spent by its last checkpoint (``state``):
    the run's ledger, and that invocation's model and tool calls (none when the checkpoint is an earlier
    invocation's, whose record has them already)."""
    record.ledger = Ledger(state.context)
    kept = SO_FAR.get(state.context)
    if kept.get("started_at") == record.started_at:
        record.model_calls = [dict(call) for call in kept.get("model_calls") or [] if isinstance(call, dict)]
        record.tool_calls = [dict(call) for call in kept.get("tool_calls") or [] if isinstance(call, dict)]


def new_turn(state: RunState | None, run_id: str) -> RunState | None:
    """A new turn of a thread is a new run over the thread's history: its own id, tool budget and checkpoints."""
    if state is None:
        return None
    VERSION.clear(state.context)
    GRANTED.clear(state.context)  # an approver's grant was for the turn it came with
    SPENT.clear(state.context)  # a new run's ledger starts at zero (the thread's day adds the runs up)
    SO_FAR.clear(state.context)
    return replace(state, run_id=run_id, tool_calls_used=0)


class PersistenceHook(Hook):
    def __init__(self, runs: RunStore, *, mutating: set[str], thread_id: str | None = None) -> None:
        self.runs = runs
        self.mutating = mutating
        self.thread_id = thread_id  # listed with the run (runs list --thread)

    def after_step(self, run: Run) -> None:
        checkpoint(self.runs, run)

    def on_run_end(self, run: Run) -> None:
        SO_FAR.clear(run.state.context)  # the record has them now
        self.runs.save_record(run.record, thread_id=self.thread_id)

    def before_tool_call(self, run: Run, call: ToolCall) -> ToolOutcome | None:
        if call.name not in self.mutating:
            return None
        journal = JOURNAL.use(run.state.context)
        entry = journal.get(call.id)
        if entry and not binds(entry, call):  # the id of another call: neither replayed nor run under it
            return ToolOutcome(call, error_text(REUSED.format(tool=call.name)), True, mutating=True)
        if entry and entry["status"] == "done":
            run.record.event(MutationReplayed(call=call.id, tool=call.name))
            return ToolOutcome(call, entry.get("result", ""), entry.get("is_error", False), mutating=True)
        if entry:
            run.record.event(MutationUnknown(call=call.id, tool=call.name))
            return ToolOutcome(call, error_text(UNKNOWN.format(tool=call.name)), True, mutating=True)
        journal[call.id] = {"status": "started", "tool": call.name, "arguments_sha256": arguments_hash(call.arguments)}
        checkpoint(self.runs, run)  # durable before the side effect
        return None

    def on_tool_result(self, run: Run, outcome: ToolOutcome) -> ToolOutcome:
        journal = JOURNAL.get(run.state.context)
        entry = journal.get(outcome.call.id)
        if entry is not None and entry["status"] == "started":
            journal[outcome.call.id] = {
                **entry,
                "status": "done",
                "result": outcome.content,
                "is_error": outcome.is_error,
            }
        return outcome


def checkpoint(runs: RunStore, run: Run) -> None:
    """The run's state saved, with what its invocation spent so far."""
    # The version travels inside the state: a worker resumed from an old checkpoint (a duplicate delivery,
    # a retried invocation) expects that old version, loses the conditional write, and stops.
    expected = VERSION.get(run.state.context)
    VERSION.set(run.state.context, (expected or 0) + 1)
    record = run.record
    SO_FAR.set(
        run.state.context,
        {
            "started_at": record.started_at,
            "model_calls": list(record.model_calls),
            "tool_calls": list(record.tool_calls),
        },
    )
    try:
        runs.save_checkpoint(run.state, expected_version=expected)
    except VersionConflictError as error:
        VERSION.set(run.state.context, expected)
        raise StoreError(f"another worker advanced run {run.state.run_id}; this one stops ({error})") from None


class KeptAtStart(Hook):
    """A CLI turn's state checkpointed as it starts, the person's message in it: a turn killed in its first model
    call (nothing else is checkpointed before a step ends) is not lost; its thread's next turn goes on from it
    (``unfinished``). A worker needs none: its queue delivers the message again."""

    def __init__(self, runs: RunStore) -> None:
        self.runs = runs

    def on_run_start(self, run: Run) -> None:
        checkpoint(self.runs, run)
