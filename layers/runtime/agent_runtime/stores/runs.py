"""Runs and threads in a store: checkpoints, records, and the conversation state of a thread."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar, cast

from ..ids import RUN_ID as RUN_ID  # where they were, for their importers
from ..ids import check_thread_id as check_thread_id
from ..inbound import TriggerEvent
from ..messages import find_orphans
from ..record import RunRecord, RunState, RunStatus, with_earlier
from ..redaction import scrubbed
from ..stopping import StopRequest
from ..views.rows import Rating, RunRow, read_rating, read_row
from ..views.run import StoredRun, read_run
from .base import Store
from .exceptions import InvalidStateError, VersionConflictError
from .items import (
    ActiveRun,
    Announced,
    Asked,
    Decided,
    Deferred,
    LatestRun,
    Pane,
    Progress,
    Reply,
    SpendRaise,
    StoredItem,
    Streamed,
    ThreadBase,
    parse,
)

T = TypeVar("T", bound=StoredItem)

RUN_TTL = 30 * 24 * 3600  # run items expire after 30 days (DynamoDB TTL); threads live until deleted


def run_partition(run_id: str) -> str:
    return f"run#{run_id}"


def thread_partition(thread_id: str) -> str:
    return f"thread#{thread_id}"


RUNS_INDEX = "runs"  # partition: a summary per run invocation, for `runs list`
# Every item a run keeps in its partition is named here, and only here.
CHECKPOINT, RECORD = "checkpoint", "record"
SUMMARY = "summary"  # run item: the latest invocation's row of the runs index
FEEDBACK = "feedback#"  # run items: one person's rating of the answer (feedback#<user>)
# The items the trigger path keeps beside them are typed, each named by its class (stores/items.py): the event,
# the reply's journal, the progress message, the thread base, approvals asked and decided, the runs channel's line,
# a stop request.


class RunStore:
    """A run's partition: checkpoint, record, and the items the trigger path keeps beside them."""

    def __init__(self, store: Store, *, ttl: int = RUN_TTL) -> None:
        self.store, self.ttl = store, ttl

    def _get(self, run_id: str, name: str) -> dict[str, Any] | None:
        item = self.store.get_item(run_partition(run_id), name)
        return None if item is None else item.data

    def _put(self, run_id: str, name: str, data: dict[str, Any]) -> None:
        self.store.put_latest(run_partition(run_id), name, data, ttl=self.ttl)

    def _item(self, run_id: str, kind: type[T], key: str = "") -> T | None:
        """The run's item of ``kind`` (its name, or its prefix and ``key``), typed; None when there is none."""
        item = self.store.get_item(run_partition(run_id), kind.NAME + key)
        return None if item is None else cast(T, parse(kind.NAME + key, item.data))

    def _keep(self, run_id: str, item: StoredItem, key: str = "") -> None:
        """Writes the item whatever is stored (an item only this run writes)."""
        self.store.put_latest(run_partition(run_id), item.NAME + key, item.to_data(), ttl=self.ttl)

    def _first(self, run_id: str, item: StoredItem, key: str = "") -> bool:
        """Writes the item only if there is none yet: False when another writer was first (a second click)."""
        try:
            self.store.put_item(
                run_partition(run_id), item.NAME + key, item.to_data(), expected_version=None, ttl=self.ttl
            )
        except VersionConflictError:
            return False
        return True

    def save_event(self, run_id: str, event: TriggerEvent) -> None:
        self._keep(run_id, event)

    def load_event(self, run_id: str) -> TriggerEvent | None:
        return self._item(run_id, TriggerEvent)

    def save_thread_base(self, run_id: str, version: int | None, files: list[str]) -> None:
        self._keep(run_id, ThreadBase(version, tuple(files)))

    def load_thread_base(self, run_id: str) -> ThreadBase | None:
        return self._item(run_id, ThreadBase)

    def progress_message(self, run_id: str) -> str | None:
        progress = self._item(run_id, Progress)
        return None if progress is None else progress.ts

    def save_progress_message(self, run_id: str, ts: str) -> None:
        self._keep(run_id, Progress(ts))

    def answer_stream(self, run_id: str) -> Streamed | None:
        """The message the run's answer streams into, and whether it is still open (``Streamed``)."""
        return self._item(run_id, Streamed)

    def save_answer_stream(self, run_id: str, ts: str, state: str) -> None:
        self._keep(run_id, Streamed(ts, state))

    def announced(self, run_id: str) -> Announced | None:
        """Where the runs channel's line about the run is (channel, ts) and its text."""
        return self._item(run_id, Announced)

    def save_announced(self, run_id: str, line: Announced) -> None:
        self._keep(run_id, line)

    def reply_state(self, run_id: str) -> str | None:
        reply = self._item(run_id, Reply)
        return None if reply is None else reply.state

    def claim_reply(self, run_id: str, text: str = "", *, rated: bool = False) -> bool:
        """Mark the reply as being posted, with its ``text``; False if another delivery already did (it posts,
        this one must not)."""
        return self._first(run_id, Reply("posting", text=text, rated=rated))

    def reply_claim(self, run_id: str) -> Reply | None:
        """The reply's journal: its state and, while posting, the answer that was going out."""
        return self._item(run_id, Reply)

    def mark_replied(self, run_id: str, *, chars: int, files: int) -> None:
        self._keep(run_id, Reply("posted", chars, files))

    def approval_asked(self, run_id: str, call_id: str) -> Asked | None:
        return self._item(run_id, Asked, call_id)

    def save_approval_asked(self, run_id: str, call_id: str, where: Asked) -> None:
        self._keep(run_id, where, call_id)

    def decision(self, run_id: str, call_id: str) -> Decided | None:
        return self._item(run_id, Decided, call_id)

    def save_decision(self, run_id: str, call_id: str, decision: Decided) -> bool:
        """The first decision wins; False when the call was already decided (a second click, a redelivery)."""
        return self._first(run_id, decision, call_id)

    def request_stop(self, run_id: str, request: StopRequest) -> bool:
        """Asks the run to stop at its next step; False when it was asked already (a second click, a redelivery)."""
        return self._first(run_id, request)

    def stop_request(self, run_id: str) -> StopRequest | None:
        return self._item(run_id, StopRequest)

    def load_checkpoint(self, run_id: str) -> tuple[RunState, int] | None:
        item = self.store.get_item(run_partition(run_id), CHECKPOINT)
        return None if item is None else (RunState.from_dict(item.data), item.version)

    def save_checkpoint(self, state: RunState, *, expected_version: int | None) -> int:
        partition = run_partition(state.run_id)
        return self.store.put_item(
            partition, CHECKPOINT, state.to_dict(), expected_version=expected_version, ttl=self.ttl
        )

    def save_record(self, record: RunRecord, *, thread_id: str | None = None) -> None:
        """Saved once per invocation; a run's later invocation (after the deadline, an approval) adds to what the
        earlier ones saved, so the record is the whole run's: every call, event and approval, its usage summed."""
        data = scrubbed(record.to_dict())  # no secret this process used: a script's error, a tool's words
        data = with_earlier(self._get(record.run_id, RECORD), data)
        self._put(record.run_id, RECORD, data)
        summary = {
            "run_id": record.run_id,
            "workflow": record.workflow,
            "status": data["status"],
            "model_calls": len(data["model_calls"]),  # every invocation's, as its tokens and cost
            "tool_calls": len(data["tool_calls"]),
            "tokens": data["usage"]["total_tokens"],
            "cost_usd": data["cost_usd"],
            "cost": data["cost"],
            "started_at": record.started_at,
            "first_started_at": data["started_at"],  # the whole run's (with_earlier keeps the first)
            "ended_at": record.ended_at,
            "thread_id": thread_id,
        }
        self._index(summary)

    def save_started(self, record: RunRecord, *, thread_id: str | None, process: dict[str, Any]) -> None:
        """The run's row as it starts, saying running and which process runs it (``runs list`` tells a run whose
        process is gone; ``runs stop`` finds it in its first step). Its record replaces the row at the end."""
        self._index(
            {
                "run_id": record.run_id,
                "workflow": record.workflow,
                "model": record.model,
                "status": str(RunStatus.RUNNING),
                "model_calls": 0,
                "tool_calls": 0,
                "tokens": 0,
                "cost_usd": None,
                "cost": {},
                "started_at": record.started_at,
                "first_started_at": (self._get(record.run_id, RECORD) or {}).get("started_at") or record.started_at,
                "ended_at": None,
                "thread_id": thread_id,
                "process": process,
            }
        )

    def _index(self, summary: dict[str, Any]) -> None:
        """The index `runs list` reads: one item per invocation, named to sort by time (newest last)."""
        name, thread_id = f"{summary['started_at']}#{summary['run_id']}", summary["thread_id"]
        self.store.put_latest(RUNS_INDEX, name, summary, ttl=self.ttl)
        # The same row under its thread and its status: a filtered listing reads only those (was: every row).
        if thread_id:
            self.store.put_latest(f"{RUNS_INDEX}#thread#{thread_id}", name, summary, ttl=self.ttl)
        self.store.put_latest(f"{RUNS_INDEX}#status#{summary['status']}", name, summary, ttl=self.ttl)
        self._put(summary["run_id"], SUMMARY, summary)  # the run's latest row: its status now

    def list_runs(self, *, limit: int = 20, thread_id: str | None = None, status: str | None = None) -> list[RunRow]:
        """Newest first, one row per run (its latest invocation), filtered by thread and status."""
        return list(itertools.islice(self.rows(thread_id=thread_id, status=status), limit))

    def rows(self, *, thread_id: str | None = None, status: str | None = None) -> Iterator[RunRow]:
        """Every row, newest first, read as it is asked for: a caller stops where its period ends (a thread's spend
        today), whatever the count."""
        partition = RUNS_INDEX
        if thread_id or status:  # the narrower index: a thread's runs, else the runs that ever had the status
            partition += f"#thread#{thread_id}" if thread_id else f"#status#{status}"
        for run_id, name in self._newest(partition):
            row = self._latest(partition, name, run_id, filtered=bool(status))
            if row is None or (thread_id and row.thread_id != thread_id) or (status and row.status != status):
                continue
            yield row

    def started(self) -> Iterator[tuple[str, str]]:
        """Every run of the index, newest first, once each: its id and when its latest invocation started (as the
        index names it, unparsed). Names only — the whole listing, which S3 + DynamoDB reads page by page — so no
        row is read and no run is left out: ``runs stats`` reads a period this way, down to its first run."""
        for run_id, name in self._newest(RUNS_INDEX):
            yield run_id, name.split("#", 1)[0]

    def _newest(self, partition: str) -> Iterator[tuple[str, str]]:
        seen: set[str] = set()
        for name in reversed(self.store.list_items(partition)):
            run_id = name.split("#", 1)[-1]
            if run_id not in seen:
                seen.add(run_id)
                yield run_id, name

    def _latest(self, partition: str, name: str, run_id: str, *, filtered: bool) -> RunRow | None:
        """The run's row; with a status filter, its latest one (a run suspended, then completed, is listed once,
        under its status now)."""
        if filtered and (latest := self.summary(run_id)) is not None:
            return latest
        item = self.store.get_item(partition, name)
        return read_row(item.data) if item is not None else None

    def summary(self, run_id: str) -> RunRow | None:
        """The run's row of the runs index as of its latest invocation (workflow, status, thread, cost)."""
        data = self._get(run_id, SUMMARY)
        return None if data is None else read_row(data)

    def load_run(self, run_id: str, *, feedback: bool = True) -> StoredRun | None:
        """The whole run (every invocation), typed, with the ratings of its answer (``feedback``: without them for
        a caller that has no use for ratings: a run that has just ended has none). ``Unreadable`` says where a
        damaged record is damaged; :meth:`load_record` still has it as stored."""
        data = self.load_record(run_id, feedback=feedback)
        return None if data is None else read_run(data)

    def load_record(self, run_id: str, *, feedback: bool = True) -> dict[str, Any] | None:
        """The run's record as stored (JSON: ``runs show --json``), with the feedback people gave its answer since
        (``feedback``: by, verdict, at). Readers read :meth:`load_run`."""
        record = self._get(run_id, RECORD)
        if record is not None and feedback:
            record["feedback"] = self._ratings(run_id)
        return record

    def save_feedback(self, run_id: str, user: str, verdict: str, at: float, name: str = "") -> bool:
        """A person's rating of the run's answer, with their name where the click gave one: one per person, the
        latest wins; False when nothing changed (the same verdict again)."""
        known = self._get(run_id, FEEDBACK + user)
        if known is not None and read_rating(known).verdict == verdict:
            return False
        self._put(run_id, FEEDBACK + user, Rating(user, verdict, at, name).to_dict())
        return True

    def feedback(self, run_id: str) -> list[Rating]:
        return [read_rating(item) for item in self._ratings(run_id)]

    def _ratings(self, run_id: str) -> list[dict[str, Any]]:
        names = self.store.list_items(run_partition(run_id), FEEDBACK)
        return [item for name in names if (item := self._get(run_id, name)) is not None]


class ThreadStore:
    """A thread's state continues across external turns (a Slack thread, a JIRA issue, ``--thread``); beside it, the
    thread's typed items (stores/items.py): the run under way, its newest run, messages waiting behind a decision,
    raised spend, the pane."""

    def __init__(self, store: Store) -> None:
        self.store = store

    def _item(self, thread_id: str, kind: type[T]) -> T | None:
        item = self.store.get_item(thread_partition(thread_id), kind.NAME)
        return None if item is None else cast(T, parse(kind.NAME, item.data))

    def _keep(self, thread_id: str, item: StoredItem) -> None:
        self.store.put_latest(thread_partition(thread_id), item.NAME, item.to_data())

    def mark_active(self, thread_id: str, run_id: str | None) -> None:
        """Name the run of the turn under way (None: no turn is under way)."""
        self._keep(thread_id, ActiveRun(run_id))

    def active(self, thread_id: str) -> str | None:
        """The run of the turn under way (suspended, or killed mid-run), if any."""
        active = self._item(thread_id, ActiveRun)
        return None if active is None else active.run_id

    def mark_latest(self, thread_id: str, run_id: str) -> None:
        """Name the thread's newest run as it starts: "stop" written in the thread stops it if it has not answered."""
        self._keep(thread_id, LatestRun(run_id))

    def latest(self, thread_id: str) -> str | None:
        latest = self._item(thread_id, LatestRun)
        return None if latest is None else latest.run_id

    def defer(self, thread_id: str, message: Mapping[str, Any]) -> None:
        """Keep a queue message until the thread's turn under way ends (one waiting for approval)."""
        self._keep(thread_id, Deferred((*self.deferred(thread_id), message)))

    def deferred(self, thread_id: str) -> tuple[Mapping[str, Any], ...]:
        """The messages kept until the turn under way ends, oldest first (still kept: drop them once re-sent)."""
        deferred = self._item(thread_id, Deferred)
        return () if deferred is None else deferred.messages

    def drop_deferred(self, thread_id: str, count: int) -> None:
        """Forget the ``count`` oldest kept messages (those re-sent); one deferred meanwhile stays."""
        if count:
            self._keep(thread_id, Deferred(self.deferred(thread_id)[count:]))

    def save_pane(self, thread_id: str, pane: Pane) -> None:
        """Mark the thread as one of the app's assistant threads, with what the person looks at beside it."""
        self._keep(thread_id, pane)

    def pane(self, thread_id: str) -> Pane | None:
        return self._item(thread_id, Pane)

    def raise_spend(self, thread_id: str, day: str, dollars: float, by: str, *, key: str) -> float:
        """An approver's "continue with $N more": the thread may spend N more on ``day`` (UTC); returns the day's
        total raise. ``key`` names the decision (the run it started): a redelivered message raises nothing more."""
        known = self._item(thread_id, SpendRaise)
        today = known if known is not None and known.day == day else SpendRaise(day, 0.0)
        if key in today.keys:
            return today.dollars
        raised = today.dollars + dollars
        self._keep(thread_id, SpendRaise(day, raised, by, (*today.keys, key)[-100:]))
        return raised

    def spend_raised(self, thread_id: str, day: str) -> float:
        raised = self._item(thread_id, SpendRaise)
        return raised.dollars if raised is not None and raised.day == day else 0.0

    def load(self, thread_id: str) -> tuple[RunState | None, int | None]:
        item = self.store.get_item(thread_partition(thread_id), "state")
        return (None, None) if item is None else (RunState.from_dict(item.data), item.version)

    def save(self, thread_id: str, state: RunState, *, expected_version: int | None) -> int:
        """Raises ``VersionConflictError`` if another run saved the thread since ``expected_version``, and
        ``InvalidStateError`` (saving nothing) if the state would be refused on the thread's next turn."""
        problems = find_orphans(state.messages)
        if problems:
            raise InvalidStateError(f"thread {thread_id!r} not saved: {'; '.join(problems)}")
        return self.store.put_item(
            thread_partition(thread_id), "state", state.to_dict(), expected_version=expected_version
        )


class StoreSummaryMemo:
    """Compaction summaries by (run, span hash), in the run's partition."""

    def __init__(self, store: Store, *, ttl: int = RUN_TTL) -> None:
        self.store, self.ttl = store, ttl

    def get(self, run_id: str, key: str) -> dict[str, Any] | None:
        item = self.store.get_item(run_partition(run_id), f"summary#{key}")
        return None if item is None else item.data

    def put(self, run_id: str, key: str, value: dict[str, Any]) -> None:
        self.store.put_latest(run_partition(run_id), f"summary#{key}", value, ttl=self.ttl)
