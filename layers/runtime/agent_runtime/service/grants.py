"""An approver's "continue with $N more": a thread that stopped at its spend limit goes on. N is the next run's
own limit and N more for the thread today, applied once per message (the run it starts) however often the queue
delivers it.

Only an approver may grant: someone ``tools.approvers`` names, or a member of a group of ``access.approve``. A
workflow that names neither has no one who may (a limit anyone in the thread could lift would be no limit), and
``"requester"`` among the approvers grants nothing here: every message in a thread is its sender's request, so it
would let anyone lift it. What the run's stop says (``go_on``) and what a grant does are decided here alike.
"""

from __future__ import annotations

import re
import time

from aws_lambda_powertools import Logger

from ..access import RunAccess
from ..chat.channels import Channel
from ..inbound import TriggerEvent
from ..spend import GoOn
from ..stores import ThreadStore
from ..workflows import Workflow

CONTINUE_WITH = re.compile(r"\bcontinue with \$(\d{1,6}(?:\.\d{1,2})?) more\b", re.IGNORECASE)
MAX_GRANT = 10_000.0  # dollars: one message cannot grant more
NOT_AN_APPROVER = "Only the workflow's approvers can raise its spend limit ({reason})."
NOBODY = (
    "Nobody can raise this workflow's spend limit from a conversation: it names no approvers (tools.approvers, "
    "access.approve). To go on, its owner raises {keys} in {file}; a run from the command line takes run --max-cost."
)
CONTINUE = 'one of the workflow\'s approvers can reply "continue with $N more" in the thread to go on'


def grantors(workflow: Workflow) -> tuple[str, ...]:
    """The ids of ``tools.approvers`` that may grant (not ``"requester"``)."""
    return tuple(name for name in workflow.tools.approvers if name != "requester")


def anyone_may_grant(workflow: Workflow) -> bool:
    """Whether the workflow names anyone who may grant: an approver's id, or an ``access.approve`` group."""
    return bool(grantors(workflow) or workflow.access.approve)


def go_on(workflow: Workflow) -> GoOn:
    """How a thread goes on past the run's own limit and the thread's day, as the run's stop says it."""
    where = f"workflows/{workflow.name}.yaml"
    if anyone_may_grant(workflow):
        return GoOn(
            run=f"{CONTINUE}, or a new message starts a run with its own limit (limits.max_cost in {where})",
            thread_day=f"{CONTINUE} (or raise limits.max_cost_per_thread_day in {where}, or wait for the next "
            "day, UTC)",
        )
    return GoOn(
        run=f"a new message in the thread starts a run with its own limit (limits.max_cost in {where}); the "
        "workflow names no approvers who could grant more",
        thread_day=f"raise limits.max_cost_per_thread_day in {where} to go on, or wait for the next day (UTC); "
        "the workflow names no approvers who could grant more",
    )


def granted(
    event: TriggerEvent,
    workflow: Workflow,
    channel: Channel,
    run_id: str,
    threads: ThreadStore,
    log: Logger,
    run_access: RunAccess,
) -> float:
    """The dollars this message grants (0: none; or not an approver's, who is told why and how it is raised)."""
    asked = CONTINUE_WITH.search(event.text or "")
    limits = workflow.limits
    if asked is None or (limits.max_cost is None and limits.max_cost_per_thread_day is None):
        return 0.0
    if not anyone_may_grant(workflow):
        keys = [f"limits.{key}" for key in ("max_cost", "max_cost_per_thread_day") if getattr(limits, key) is not None]
        channel.tell(event.user, NOBODY.format(keys=" and ".join(keys), file=f"workflows/{workflow.name}.yaml"))
        return 0.0
    # "requester" never matches: it is left out of the ids, and no one is the requester of another's limit here.
    verdict = run_access.access.may_approve(run_access.who, grantors(workflow), requester="")
    if not verdict.allowed:
        channel.tell(event.user, NOT_AN_APPROVER.format(reason=verdict.reason))
        return 0.0
    dollars = min(float(asked.group(1)), MAX_GRANT)
    if not dollars > 0:  # "$0 more" grants nothing (and a zero limit would stop the run before it starts)
        return 0.0
    day = time.strftime("%Y-%m-%d", time.gmtime())
    threads.raise_spend(event.thread_id, day, dollars, event.user, key=run_id)
    log.info("spend limit raised", extra={"dollars": dollars})
    return dollars
