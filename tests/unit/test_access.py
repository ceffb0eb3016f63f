"""The access rules (issue 53) as promises over the input space: a requester passes a rule exactly when a group the
rule names lists them (by any id their source gives, or by a group a directory reads); the webhook's early decision
never differs from the worker's; a tool is offered exactly when a pattern of one of the requester's groups matches
it; a budget counts exactly its scope's other runs of its period; and the section's every problem is said."""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Any

import pytest
import yaml
from agent_runtime.access import Access, BudgetBook, DirectoryError, Requester
from agent_runtime.reading.figures import Figures
from agent_runtime.reading.stats import add_up
from agent_runtime.spend import Scope, SpendLimit
from agent_runtime.stores import LocalStore
from agent_runtime.workflows import Workflow, WorkflowError, parse_workflow
from hypothesis import given, settings
from hypothesis import strategies as st

USERS = ["U1", "U2", "U3", "U4"]
CHANNELS = ["C1", "C2"]
USERGROUPS = {"S1": {"U1", "U3"}, "S2": {"U4"}}
TOOLS = ["notion_search", "notion_update", "billing_get", "slack_thread"]
PATTERNS = ["notion_*", "billing_get", "*_thread", "*"]


class Directory:
    """Slack user groups as a workspace would answer them (S9: a group the token may not read)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def slack_usergroup(self, group_id: str) -> frozenset[str]:
        self.asked.append(group_id)
        if group_id == "S9":
            raise DirectoryError("missing_scope")
        return frozenset(USERGROUPS.get(group_id, ()))

    def jira_groups(self, account_id: str) -> frozenset[str]:
        return frozenset({"sre"} if account_id == "acct-1" else ())


def workflow(access: dict[str, Any], limits: dict[str, Any] | None = None) -> Workflow:
    data = {
        "name": "guarded",
        "description": "d",
        "prompt": "p",
        "model": {"name": "gpt-4o", "context_window": 128000},
        "access": access,
    }
    return parse_workflow(data | ({"limits": limits} if limits else {}), file="guarded.yaml")


def slack(user: str, channel: str = "C1") -> Requester:
    ids = (("slack_users", user), ("slack_channels", channel), ("slack_usergroups", user))
    return Requester(f"slack:{user}", user, ids)


groups = st.dictionaries(
    st.sampled_from(["oncall", "leads", "support"]),
    st.fixed_dictionaries(
        {},
        optional={
            "slack_users": st.lists(st.sampled_from([*USERS, "*"]), max_size=3),
            "slack_channels": st.lists(st.sampled_from(CHANNELS), max_size=2),
            "slack_usergroups": st.lists(st.sampled_from([*USERGROUPS, "S9"]), max_size=2),
        },
    ).filter(bool),
    min_size=1,
)


@settings(max_examples=60, deadline=None)
@given(groups=groups, data=st.data(), user=st.sampled_from(USERS), channel=st.sampled_from(CHANNELS))
def test_a_requester_passes_start_exactly_when_a_named_group_lists_them(groups, data, user, channel) -> None:
    start = data.draw(st.lists(st.sampled_from(sorted(groups)), min_size=1, unique=True))
    access = Access(workflow({"groups": groups, "start": start}), Directory())
    who = slack(user, channel)

    def member(group: dict[str, list[str]]) -> bool:
        usergroups = group.get("slack_usergroups", [])
        return (
            user in group.get("slack_users", [])
            or "*" in group.get("slack_users", [])
            or channel in group.get("slack_channels", [])
            or any(user in USERGROUPS.get(g, ()) for g in usergroups)
        )

    verdict = access.may_start(who)
    assert verdict.allowed == any(member(groups[name]) for name in start)
    assert set(verdict.groups) == {name for name, group in groups.items() if member(group)}
    early = Access(workflow({"groups": groups, "start": start})).at_door(who)  # the webhook: no directory
    assert early is None or early.allowed == verdict.allowed  # it never refuses whom the worker lets in
    if not verdict.allowed:
        assert "access.start" in verdict.reason and "owner" in verdict.reason


@settings(max_examples=60, deadline=None)
@given(groups=groups, data=st.data(), user=st.sampled_from(USERS))
def test_a_tool_is_offered_exactly_when_a_pattern_of_one_of_the_requesters_groups_matches(groups, data, user) -> None:
    table = data.draw(st.dictionaries(st.sampled_from(sorted(groups)), st.lists(st.sampled_from(PATTERNS))))
    access = Access(workflow({"groups": groups, "tools": table}), Directory())
    who = slack(user)
    offered = access.offered(who)
    assert offered is not None
    mine = access.groups_of(who)
    for tool in TOOLS:
        expected = any(fnmatchcase(tool, pattern) for name in mine for pattern in table.get(name, []))
        assert offered(tool) == expected == access.may_call(who, tool).allowed


def test_without_rules_everyone_starts_and_every_tool_is_offered() -> None:
    plain = parse_workflow(
        {"name": "plain", "description": "d", "prompt": "p", "model": {"name": "gpt-4o", "context_window": 128000}},
        file="plain.yaml",
    )
    access = Access(plain, Directory())
    assert not plain.access and access.may_start(slack("U9")).allowed and access.offered(slack("U9")) is None
    assert access.may_approve(slack("U9"), (), "U1").allowed  # no approvers named: anyone, as before


def test_an_unreadable_group_lets_no_one_in_and_the_refusal_says_why() -> None:
    flow = workflow({"groups": {"sre": {"slack_usergroups": ["S9"]}}, "start": ["sre"]})
    verdict = Access(flow, Directory()).may_start(slack("U1"))
    assert not verdict.allowed and "missing_scope" in verdict.reason
    assert Access(flow).at_door(slack("U1")) is None  # the webhook cannot tell: the worker decides


def test_approvers_are_the_listed_ids_and_the_approve_groups_members() -> None:
    access = Access(workflow({"groups": {"leads": {"slack_users": ["U2"]}}, "approve": ["leads"]}), Directory())
    assert access.may_approve(slack("U2"), (), "U1").allowed
    assert not access.may_approve(slack("U3"), (), "U1").allowed  # a rule written: not anyone any more
    assert access.may_approve(slack("U3"), ("U3",), "U1").allowed  # tools.approvers still decide
    assert access.may_approve(slack("U1"), ("requester",), "U1").allowed


@pytest.mark.parametrize(
    ("access", "why"),
    [
        ({"start": ["ghosts"]}, "access.start: no group 'ghosts'"),
        ({"groups": {"Oncall": {"slack_users": ["U1"]}}}, "access.groups.Oncall: a group's name"),
        ({"groups": {"oncall": {"slack_user": ["U1"]}}}, "did you mean 'slack_users'"),
        ({"groups": {"oncall": {"slack_users": "U1"}}}, "must be a list of ids"),
        ({"groups": {"oncall": {"slack_users": ["U1"]}}, "start": []}, "at least one"),
        ({"groups": {"oncall": {"slack_users": ["U1"]}}, "tools": {"oncall": ["rm -rf"]}}, "tool names or patterns"),
        ({"groups": {"oncall": {"slack_users": ["U1"]}}, "tools": {"leads": ["*"]}}, "access.tools.leads"),
        ({"groups": {"oncall": {}}}, "must be a mapping of members"),
    ],
)
def test_every_problem_of_the_section_is_said_with_its_key(access: dict[str, Any], why: str) -> None:
    with pytest.raises(WorkflowError) as raised:
        workflow(access)
    assert why in str(raised.value)


def test_a_team_budget_needs_groups_and_every_budget_a_price() -> None:
    with pytest.raises(WorkflowError, match="a team's budget is an access group's"):
        workflow({}, {"max_cost_per_team_month": 5})
    data = yaml.safe_load("name: x\ndescription: d\nprompt: p\nmodel: {name: my-model, context_window: 4096}")
    with pytest.raises(WorkflowError, match=r"limits\.max_cost_per_person_day: model 'my-model' has no known price"):
        parse_workflow(data | {"limits": {"max_cost_per_person_day": 1}}, file="x.yaml")


charges = st.lists(
    st.tuples(st.sampled_from(USERS), st.sampled_from(["2026-11-02", "2026-11-03"]), st.integers(0, 500)),
    max_size=12,
)


@settings(max_examples=40, deadline=None)
@given(charges=charges, user=st.sampled_from(USERS))
def test_a_budget_counts_exactly_its_scopes_other_runs_of_its_period(tmp_path_factory, charges, user) -> None:
    store = LocalStore(tmp_path_factory.mktemp("budgets"))
    limits = {"max_cost_per_person_day": 1, "max_cost_per_person_month": 3, "max_cost_per_workflow_month": 9}
    flow = workflow({"groups": {"all": {"slack_users": ["*"]}}}, limits)
    for number, (person, day, cents) in enumerate(charges):
        BudgetBook(store, flow, day).charge(f"run-{number}", slack(person), ["all"], cents / 100)
    book = BudgetBook(store, flow, "2026-11-03")
    scopes = {scope.label.split(" for ")[0]: scope for scope in book.scopes(slack(user), ["all"], "run-0")}
    others = [(p, d, c / 100) for n, (p, d, c) in enumerate(charges) if n != 0]
    assert scopes[f"slack:{user}'s budget of $1 a day (UTC)"].before == pytest.approx(
        sum(c for p, d, c in others if p == user and d == "2026-11-03")
    )
    assert scopes[f"slack:{user}'s budget of $3 a month (UTC)"].before == pytest.approx(
        sum(c for p, _, c in others if p == user)
    )
    assert scopes["the workflow's budget of $9 a month (UTC)"].before == pytest.approx(sum(c for _, _, c in others))
    refused = book.refused(slack(user), ["all"], "run-new")
    spent_today = sum(c / 100 for p, d, c in charges if p == user and d == "2026-11-03")
    spent_month = sum(c / 100 for p, _, c in charges if p == user)
    total = sum(c / 100 for _, _, c in charges)
    assert (refused is not None) == (spent_today >= 1 or spent_month >= 3 or total >= 9)


def test_a_charge_is_the_runs_whole_cost_so_far_never_added_twice(tmp_path) -> None:
    store = LocalStore(tmp_path)
    flow = workflow({}, {"max_cost_per_person_month": 1})
    for spent in (0.2, 0.5, 0.5):  # each invocation's end, and a redelivery of the last
        BudgetBook(store, flow, "2026-11-02").charge("run-a", slack("U1"), [], spent)
    [scope] = BudgetBook(store, flow, "2026-11-20").scopes(slack("U1"), [], "run-b")
    assert scope.before == pytest.approx(0.5)


def test_the_tightest_limit_names_itself_and_how_to_raise_it() -> None:
    person = Scope(20, 19.5, "slack:U1's budget of $20 a month (UTC) for w (limits.max_cost_per_person_month)", "raise")
    spend = SpendLimit(per_run=5, scopes=(person,))
    left, why = spend.room(0.25, 0.0)
    assert left == pytest.approx(0.25) and "max_cost_per_person_month" in why and "$19.7500 spent" in why
    assert SpendLimit(scopes=(person,)) and not SpendLimit()


figures_of_runs = st.lists(
    st.tuples(
        st.sampled_from(["slack:U1", "jira:a1", ""]), st.lists(st.sampled_from(["oncall", "leads"]), unique=True)
    ),
    max_size=10,
)


@settings(max_examples=40, deadline=None)
@given(runs=figures_of_runs, cents=st.lists(st.integers(0, 1000), min_size=10, max_size=10))
def test_runs_stats_by_person_adds_up_to_the_total_and_by_team_counts_each_team(runs, cents) -> None:
    base = dict(trigger="slack", status="completed", reason=None, tokens=1, prompt_tokens=1, cached_tokens=0)
    base |= dict(model_calls=1, compactions=0, duration_s=None, first_token_ms=None)
    figured = [
        (Figures(workflow="w", cost=c / 100, person=p, teams=tuple(t), **base), ())
        for (p, t), c in zip(runs, cents, strict=False)
    ]
    total = add_up(figured)
    by_person, by_team = add_up(figured, "person"), add_up(figured, "team")
    assert by_person["runs"] == total["runs"] == sum(row["runs"] for row in by_person["groups"])
    assert sum(row["cost_usd"] for row in by_person["groups"]) == pytest.approx(
        sum(row["cost_usd"] for row in total["groups"]), abs=1e-5
    )
    counted = {row["team"]: row["runs"] for row in by_team["groups"]}
    for team in ("oncall", "leads"):
        assert counted.get(team, 0) == sum(team in t for _, t in runs[: len(figured)])
    assert counted.get("(no team)", 0) == sum(not t for _, t in runs[: len(figured)])
