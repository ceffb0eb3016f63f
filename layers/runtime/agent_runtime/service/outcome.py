"""What the worker did with one queue message."""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    """What ``Worker.handle`` did with one message."""

    ANSWERED = "answered"
    FAILED = "failed"  # the run ended without an answer: an apology naming the run was posted
    SUSPENDED = "suspended"  # the deadline came first: a continuation is queued
    DEFERRED = "deferred"  # queued again behind the thread's suspended turn
    DUPLICATE = "duplicate"  # already answered (a redelivery), or already decided (a second click)
    AWAITING_APPROVAL = "awaiting_approval"  # a call waits for a person's decision, asked in the thread
    IGNORED = "ignored"  # a decision on a run this stack never saw (a forged id), or a wake-up with nothing due
    REFUSED = "refused"  # a decision from someone who may not decide: told so, nothing changed
    NOTED = "noted"  # Slack's pane opened or looked elsewhere (prompts offered, the context kept); a disconnect done
    STOPPED = "stopped"  # a stop request written: the run ends at its next step (or its continuation ends it)
    RATED = "rated"  # a person's rating of an answer, stored with the run (the latest per person wins)
