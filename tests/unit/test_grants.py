"""Who may raise a spend limit ("continue with $N more"), as a promise over the input space: a message grants
exactly when its sender is an approver (an id of ``tools.approvers``, or a member of an ``access.approve`` group)
and the workflow has a run's or a thread's limit to raise; a workflow that names no approver has nobody who may,
and its sender is told privately how the limit is raised; and the run's stop offers "continue with $N more"
exactly when someone may grant it, never at a budget."""

from __future__ import annotations

from typing import Any

from agent_runtime.access import Access, Requester, RunAccess, Verdict
from agent_runtime.chat.channels import Channel
from agent_runtime.inbound import TriggerEvent
from agent_runtime.service.grants import go_on, granted
from agent_runtime.spend import Estimate, Scope, SpendLimit
from agent_runtime.stores import LocalStore, ThreadStore
from agent_runtime.workflows import Workflow, parse_workflow
from aws_lambda_powertools import Logger
from hypothesis import given, settings
from hypothesis import strategies as st

USERS = ["U1", "U2", "U3", "U4"]
USERGROUPS = {"S1": frozenset({"U3"})}
DAY = "2026-11-02"


class Directory:
    """Slack user groups as a workspace would answer them."""

    def slack_usergroup(self, group_id: str) -> frozenset[str]:
        return USERGROUPS.get(group_id, frozenset())

    def jira_groups(self, account_id: str) -> frozenset[str]:
        return frozenset()


class Told(Channel):
    """A conversation's private words, as the person would read them."""

    def __init__(self) -> None:
        self.told: list[tuple[str, str]] = []

    def tell(self, user: str, text: str) -> None:
        self.told.append((user, text))


def workflow(approvers: list[str], access: dict[str, Any] | None, limits: dict[str, Any]) -> Workflow:
    data: dict[str, Any] = {
        "name": "desk",
        "description": "d",
        "prompt": "p",
        "model": {"name": "gpt-4o", "context_window": 128000},
        "tools": {"approvers": approvers},
        "limits": limits,
    }
    return parse_workflow(data | ({"access": access} if access is not None else {}), file="desk.yaml")


def slack(user: str) -> Requester:
    return Requester(f"slack:{user}", user, (("slack_users", user), ("slack_usergroups", user)))


ACCESS = st.sampled_from(
    [
        None,  # no rules: tools.approvers alone
        {"groups": {"leads": {"slack_users": ["U2"]}}},  # groups, but no approve rule
        {"groups": {"leads": {"slack_users": ["U2"]}}, "approve": ["leads"]},
        {"groups": {"leads": {"slack_usergroups": ["S1"]}}, "approve": ["leads"]},  # read from the directory
        {"groups": {"leads": {"slack_users": ["U1", "U2"]}}, "approve": ["leads"]},  # U1 both ways
    ]
)
LIMITS = st.fixed_dictionaries(
    {},
    optional={
        "max_cost": st.just(0.5),
        "max_cost_per_thread_day": st.just(2.0),
        "max_cost_per_person_month": st.just(20.0),  # a budget: never raised by a grant
    },
)


def approving(approvers: list[str], access: dict[str, Any] | None, user: str) -> bool:
    """Whom the docs name as approvers: an id of tools.approvers ("requester" is no one's id), or a member of an
    access.approve group (listed, or in a Slack user group it names)."""
    groups = (access or {}).get("groups", {})
    for name in (access or {}).get("approve", ()):
        group = groups[name]
        if user in group.get("slack_users", ()) or any(
            user in USERGROUPS[g] for g in group.get("slack_usergroups", ())
        ):
            return True
    return user in approvers


@settings(max_examples=80, deadline=None)
@given(
    approvers=st.lists(st.sampled_from(["U1", "requester"]), unique=True),
    access=ACCESS,
    limits=LIMITS,
    user=st.sampled_from(USERS),
    dollars=st.sampled_from(["5", "0.25", "0"]),
    asked=st.booleans(),
)
def test_only_an_approver_raises_a_limit_and_anyone_else_is_told_how(
    tmp_path_factory: Any, approvers: list[str], access: Any, limits: Any, user: str, dollars: str, asked: bool
) -> None:
    flow = workflow(approvers, access, limits)
    threads = ThreadStore(LocalStore(tmp_path_factory.mktemp("store")))
    text = f"please continue with ${dollars} more" if asked else "please go on"
    event = TriggerEvent("slack", "message", "Ev1", text, user, "T1", "Ev1")
    who = slack(user)
    run_access = RunAccess(Access(flow, Directory()), who, Verdict("start", True, who.person, (), "-"), DAY)
    channel = Told()
    got = granted(event, flow, channel, "run-1", threads, Logger(service="test"), run_access)

    raisable = "max_cost" in limits or "max_cost_per_thread_day" in limits
    approver = approving(approvers, access, user)
    assert (got > 0) == (asked and raisable and approver and float(dollars) > 0)
    assert got in (0.0, float(dollars))
    assert (threads.spend_raised("T1", _today()) == got) or got == 0  # what it grants is the thread's too
    told = [said for to, said in channel.told if to == user]
    assert len(channel.told) == len(told) <= 1  # only the sender, privately, once
    assert bool(told) == (asked and raisable and not approver)
    anyone = any(approving(approvers, access, someone) for someone in USERS)
    if told and not anyone:  # nobody may: how it is raised instead
        assert "names no approvers" in told[0] and "run --max-cost" in told[0] and "workflows/desk.yaml" in told[0]
        assert all(f"limits.{key}" in told[0] for key in ("max_cost", "max_cost_per_thread_day") if key in limits)
    elif told:
        assert told[0].startswith("Only the workflow's approvers can raise its spend limit")


def _today() -> str:
    import time

    return time.strftime("%Y-%m-%d", time.gmtime())


@settings(max_examples=60, deadline=None)
@given(
    approvers=st.lists(st.sampled_from(["U1", "requester"]), unique=True),
    access=ACCESS,
    which=st.sampled_from(["run", "thread_day", "budget"]),
)
def test_a_stop_offers_continue_exactly_when_someone_may_grant_it(
    approvers: list[str], access: Any, which: str
) -> None:
    flow = workflow(approvers, access, {"max_cost": 0.5})
    anyone = any(approving(approvers, access, user) for user in USERS)
    budget = Scope(1.0, 0.99, "slack:U1's budget of $1 a day (UTC) for desk (limits.max_cost_per_person_day)", "raise")
    spend = SpendLimit(
        per_run=0.01 if which == "run" else 5.0,
        per_thread_day=0.01 if which == "thread_day" else 5.0,
        scopes=(budget,) if which == "budget" else (),
        go_on=go_on(flow),
    )
    reason = spend.reply_cap(0.0099, 0.0, 1024, Estimate(1000, 0.001, 1e-5))
    assert isinstance(reason, str)
    assert ("continue with $N more" in reason) == (anyone and which != "budget"), reason
    if which == "thread_day":
        assert "limits.max_cost_per_thread_day in workflows/desk.yaml" in reason
    if which == "run":
        assert "limits.max_cost in workflows/desk.yaml" in reason
    cli = SpendLimit(per_run=0.01 if which == "run" else 5.0, per_thread_day=0.01 if which == "thread_day" else 5.0)
    said = str(cli.reply_cap(0.0099, 0.0, 1024, Estimate(1000, 0.001, 1e-5)))
    assert "continue with" not in said  # the CLI has no thread to reply in
    assert ("--max-cost" in said) == (which == "run")  # --max-cost sets the run's limit, not the thread's day
