"""The access rules and budgets at the worker's door: who a run is for, whether they may start it (the groups
only a directory can read are read here, with the chat's credentials), whether their budgets have room — and, for
a refusal, one private line saying why, and no run. After each invocation, the run's cost goes to its budgets'
tally."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ..access import Access, BudgetBook, Requester, RunAccess, kept, refusal_text, short_of, today
from ..chat.exceptions import ReplyError
from ..deployment import Services
from ..inbound import TriggerEvent
from ..models.prices import prices_for
from ..record import RunRecord, RunState
from ..spend import Scope, smallest_run
from ..workflows import Workflow
from .directory import ChatDirectory
from .handlers import Delivery
from .outcome import Outcome

REFUSED = "Not started: {reason}."


@dataclass(frozen=True)
class Admitted:
    """A run let in: its access (who, the rules, the start decision) and the budgets it runs under."""

    run: RunAccess
    budgets: tuple[Scope, ...]
    rules: bool  # the workflow has access rules or budgets: the run keeps who it is for (else built as before)

    def given(self, services: Services) -> Services:
        return replace(services, access=self.run if self.rules else None, budgets=self.budgets)


def admitted(
    delivery: Delivery[Any], event: TriggerEvent, workflow: Workflow, run_id: str, resumed: RunState | None
) -> Admitted | Outcome:
    """The run's access and the budgets it runs under; for a new run (no ``resumed`` state) that its rules or a
    budget refuse, ``Outcome.REFUSED`` once the person is told why. A run under way goes on under the rules it started
    with (its later invocations are not asked again), its budgets' tallies read anew."""
    process = delivery.process
    who = process.sources.of(event).requester(event)
    access = Access(workflow, ChatDirectory(process.replies))
    verdict = access.may_start(who)
    fresh = resumed is None
    day = (kept(resumed.context, run_id) if resumed is not None else {}).get("day") or today(process.now())
    book = BudgetBook(process.store, workflow, str(day))
    scopes = book.scopes(who, verdict.groups, run_id)
    if fresh and not verdict.allowed:
        return refuse(delivery, event, run_id, REFUSED.format(reason=verdict.reason), who)
    need = smallest_run(prices_for(workflow.model.name, workflow.model.prices), workflow.prompt) if scopes else 0.0
    spent = short_of(scopes, need)
    if fresh and spent is not None:
        return refuse(delivery, event, run_id, refusal_text(spent, need), who)
    return Admitted(RunAccess(access, who, verdict, str(day)), scopes, bool(workflow.access or workflow.limits.budgets))


def refuse(delivery: Delivery[Any], event: TriggerEvent, run_id: str, text: str, who: Requester) -> Outcome:
    """One private line to the person (Slack: only they see it; JIRA: a comment); nothing else of a run."""
    log = delivery.process.log
    log.info("refused", extra={"requester": who.person, "reason": text})
    try:
        delivery.channel(event, run_id).tell(event.user, text)
    except ReplyError as error:
        log.warning("the refusal could not be told", extra={"error": str(error)})
    return Outcome.REFUSED


def charge(delivery: Delivery[Any], workflow: Workflow, run: RunAccess, record: RunRecord) -> None:
    """The run's cost so far into its budgets' tally (its own item, overwritten: never counted twice)."""
    if not workflow.limits.budgets:
        return
    book = BudgetBook(delivery.process.store, workflow, run.day)
    book.charge(record.run_id, run.who, run.start.groups, record.ledger.total())
