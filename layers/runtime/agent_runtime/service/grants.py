"""An approver's "continue with $N more": a thread that stopped at its spend limit goes on. N is the next run's
own limit and N more for the thread today, applied once per message (the run it starts) however often the queue
delivers it; only the workflow's approvers (anyone, when it lists none) may grant."""

from __future__ import annotations

import re
import time

from aws_lambda_powertools import Logger

from ..chat.channels import Channel
from ..inbound import TriggerEvent
from ..stores import ThreadStore
from ..workflows import Workflow

CONTINUE_WITH = re.compile(r"\bcontinue with \$(\d{1,6}(?:\.\d{1,2})?) more\b", re.IGNORECASE)
MAX_GRANT = 10_000.0  # dollars: one message cannot grant more
NOT_AN_APPROVER = "Only the workflow's approvers can raise its spend limit."


def granted(
    event: TriggerEvent, workflow: Workflow, channel: Channel, run_id: str, threads: ThreadStore, log: Logger
) -> float:
    """The dollars this message grants (0: none, or not an approver's, who is told)."""
    asked = CONTINUE_WITH.search(event.text or "")
    if asked is None or (workflow.limits.max_cost is None and workflow.limits.max_cost_per_thread_day is None):
        return 0.0
    approvers = workflow.tools.approvers
    if approvers and event.user not in approvers:
        channel.tell(event.user, NOT_AN_APPROVER)
        return 0.0
    dollars = min(float(asked.group(1)), MAX_GRANT)
    if not dollars > 0:  # "$0 more" grants nothing (and a zero limit would stop the run before it starts)
        return 0.0
    day = time.strftime("%Y-%m-%d", time.gmtime())
    threads.raise_spend(event.thread_id, day, dollars, event.user, key=run_id)
    log.info("spend limit raised", extra={"dollars": dollars})
    return dollars
