"""Runs a local worker was working on when its process ended (``agent-runtime serve`` stopped with Ctrl-C, killed),
resumed when serve starts again.

serve's queue is in memory: the message under way when it stopped is gone with it, so nothing would take the run
up again — its thread would say "working" forever, ``runs list`` would call it interrupted. Its row still says
running and names the process that ran it (``stores/running.py``); a run whose process is gone, whose trigger event
is kept and whose answer was not posted is queued again as a continuation: it goes on from its last checkpoint
(a tool call it left under way is answered as not kept), edits the same working message and answers in its
thread — or, asked to stop meanwhile (``runs stop``), ends there at once and says so in the thread. Resuming is
simpler and surer than closing: the thread gets what it asked for, and the worker's own path posts it.
"""

from __future__ import annotations

from aws_lambda_powertools import Logger

from ..record import RunStatus
from ..stores import RunStore
from ..stores.running import gone
from ..triggers.queue import EventQueue
from ..triggers.queued import ContinueMessage

LOOK_BACK = 200  # the newest running rows read at start: older ones are long past resuming


def resume_interrupted(runs: RunStore, queue: EventQueue, log: Logger) -> list[str]:
    """Queue each interrupted run of a worker again; the run ids queued."""
    resumed = []
    for row in runs.list_runs(status=str(RunStatus.RUNNING), limit=LOOK_BACK):
        if gone(row) is None or runs.load_event(row.run_id) is None or runs.reply_state(row.run_id) is not None:
            continue  # at work, or a CLI run (no trigger event), or answered already
        body = ContinueMessage(row.run_id, row.thread_id, 0).body()
        queue.send(body, group=row.thread_id or row.run_id, dedup=f"{row.run_id}:resumed:{row.started_at}")
        log.info("resumed an interrupted run", extra={"run_id": row.run_id, "workflow": row.workflow})
        resumed.append(row.run_id)
    return resumed
