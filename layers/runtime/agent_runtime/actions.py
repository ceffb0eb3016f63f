"""The action ids of the buttons the runtime posts in Slack: ``chat`` draws them, ``triggers`` reads the clicks
back. A contract with messages already posted: a renamed id leaves every older button dead."""

from __future__ import annotations

APPROVE, DENY = "approval_approve", "approval_deny"  # the approval buttons
FEEDBACK = "answer_feedback"  # the feedback buttons under an answer
STOP = "run_stop"  # the Stop button on a working run's message: its value is run_id|thread_id
