"""Runs a local worker was working on when its process ended (``agent-runtime serve`` stopped with Ctrl-C, killed),
resumed when serve starts again.

serve's queue is in memory: the message under way when it stopped is gone with it, so nothing would take the run
up again — its thread would say "working" forever, ``runs list`` would call it interrupted. Its row still says
running and names the process that ran it (``stores/running.py``); a run whose process is gone, whose trigger event
is kept and whose answer was not posted is queued again as a continuation: it goes on from its last checkpoint
(a tool call it left under way is answered as not kept), edits the same working message and answers in its
thread — or, asked to stop meanwhile (``runs stop``), ends there at once and says so in the thread. Resuming is
simpler and surer than closing: the thread gets what it asked for, and the worker's own path posts it. What the
cut-off process left in the thread goes: the answer it was streaming (ended and deleted: the resumed run streams
it whole) and, at the answer, the working message. A run whose process ended while it posted its answer (its
record ended, its reply's journal says posting) is taken up the same way: its answer is finished from the text
the journal keeps (``Answers.post_again``).
"""

from __future__ import annotations

from aws_lambda_powertools import Logger

from ..record import RunStatus
from ..stores import RunStore
from ..stores.running import gone
from ..triggers.queue import EventQueue
from ..triggers.queued import ContinueMessage
from ..views.rows import RunRow

LOOK_BACK = 200  # the newest rows read at start: older ones are long past resuming


def resume_interrupted(runs: RunStore, queue: EventQueue, log: Logger) -> list[str]:
    """Queue each interrupted run of a worker again; the run ids queued."""
    resumed = []
    for row in runs.list_runs(limit=LOOK_BACK):
        why = _interrupted(runs, row)
        if why is None:
            continue
        body = ContinueMessage(row.run_id, row.thread_id, 0).body()
        queue.send(body, group=row.thread_id or row.run_id, dedup=f"{row.run_id}:resumed:{row.started_at}")
        log.info("resumed an interrupted run", extra={"run_id": row.run_id, "workflow": row.workflow, "when": why})
        resumed.append(row.run_id)
    return resumed


def _interrupted(runs: RunStore, row: RunRow) -> str | None:
    """Why the run is taken up again: its process ended mid-run ("mid-run"), or while it posted the answer it had
    ("while posting": the record says it ended, the reply's journal says posting, with the text); None: neither, or
    a CLI run (no trigger event)."""
    if row.status == RunStatus.RUNNING:
        if gone(row) is None or runs.reply_state(row.run_id) is not None:
            return None  # at work, or answered already
        why = "mid-run"
    else:
        claim = runs.reply_claim(row.run_id)
        if claim is None or claim.state != "posting" or not claim.text:
            return None
        why = "while posting"
    return why if runs.load_event(row.run_id) is not None else None
