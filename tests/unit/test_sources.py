"""One home per trigger source (issue 49): nothing outside ``sources/`` branches on an event's source (or on a kind
a source owns), the registry gives every event exactly one source, and routing reads each workflow's ``triggers``
as it did before sources had a home."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.errors import ConfigError
from agent_runtime.inbound import PaneEvent, TriggerEvent
from agent_runtime.sources import BUILTIN, Source, Sources
from agent_runtime.sources.registry import UNKNOWN
from agent_runtime.workflows.triggers import JIRA_EVENTS, JiraTrigger, SlackTrigger, TriggerSettings
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import PACKAGE, make_workflow

OWNED = {source.name for source in BUILTIN.sources} | {kind for source in BUILTIN.sources for kind in source.kinds}


def _branch(node: ast.AST) -> bool:
    """``x.source == "slack"`` (either side, any comparison), ``match x.source:`` with a source's name as a case,
    and the same of a kind a source owns (``x.kind != "reaction_added"``)."""
    if isinstance(node, ast.Match):
        cases = [p.value for c in node.cases for p in ast.walk(c.pattern) if isinstance(p, ast.MatchValue)]
        owned = any(isinstance(case, ast.Constant) and case.value in OWNED for case in cases)
        return isinstance(node.subject, ast.Attribute) and node.subject.attr in ("source", "kind") and owned
    if not isinstance(node, ast.Compare):
        return False
    sides = [node.left, *node.comparators]
    attribute = any(isinstance(side, ast.Attribute) and side.attr in ("source", "kind") for side in sides)
    return attribute and any(isinstance(side, ast.Constant) and side.value in OWNED for side in sides)


def branches(path: Path) -> list[str]:
    return [f"{path.name}:{node.lineno}" for node in ast.walk(ast.parse(path.read_text())) if _branch(node)]


def test_nothing_outside_the_sources_branches_on_an_events_source() -> None:
    found = [f"{path.parent.name}/{hit}" for path in PACKAGE.rglob("*.py")
             if "sources" not in path.relative_to(PACKAGE).parts for hit in branches(path)]  # fmt: skip
    assert found == []


def test_the_check_sees_each_form_of_branch(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        'def f(event, meta):\n    if event.source == "jira": pass\n    if "schedule" != event.source: pass\n'
        '    if event.kind == "reaction_added": pass\n    match event.source:\n        case "api" | "x": pass\n'
        '    if meta.source == "archive": pass\n'  # a file's source, not an event's: not a trigger source
        '    match entry.kind:\n        case "turn": pass\n'  # a transcript entry's kind
    )
    assert sorted(int(hit.rsplit(":", 1)[1]) for hit in branches(probe)) == [2, 3, 4, 5]


class _Reaction(Source):
    name = "slack"
    kinds = ("reaction_added",)


class _Runs(Source):
    name = "elsewhere"
    route = "/runs"


def test_two_sources_never_take_one_kind_or_one_route() -> None:
    with pytest.raises(ConfigError, match="two sources take slack events of kind reaction_added"):
        BUILTIN.adding(_Reaction())
    with pytest.raises(ConfigError, match="two sources take the route /runs"):
        BUILTIN.adding(_Runs())


names = st.sampled_from(["slack", "jira", "webhook", "schedule", "api", "form", ""])
kinds = st.sampled_from(["app_mention", "message", "reaction_added", "comment_created", "tick", "api", "opened"])


@settings(max_examples=60, deadline=None)
@given(source=names, kind=kinds)
def test_every_event_has_one_source_its_kind_first_then_its_name(source: str, kind: str) -> None:
    event = TriggerEvent(source, kind, "k", "", "u", "t", "c")
    found = BUILTIN.of(event)
    exact = [s for s in BUILTIN.sources if s.name == source and kind in s.kinds]
    any_kind = [s for s in BUILTIN.sources if s.name == source and not s.kinds]
    assert found is (exact or any_kind or [UNKNOWN])[0]
    assert Sources(*reversed(BUILTIN.sources)).of(event) is found  # registration order never decides


def old_matches(triggers: TriggerSettings, source: str, facts: dict[str, Any]) -> bool:
    """``TriggerSettings.matches`` as it was before sources had a home: the reference routing keeps."""
    if source == "slack" and triggers.slack is not None:
        if facts.get("direct_message"):
            return triggers.slack.direct_messages
        in_channel = "*" in triggers.slack.channels or facts.get("channel") in triggers.slack.channels
        if facts.get("reaction"):
            return in_channel and facts["reaction"] in triggers.slack.reactions
        return in_channel
    if source == "jira" and triggers.jira is not None:
        rule = triggers.jira
        return (
            ("*" in rule.projects or facts.get("project") in rule.projects)
            and (not rule.issue_types or facts.get("issue_type") in rule.issue_types)
            and (not rule.labels or bool(set(rule.labels) & set(facts.get("labels", ()))))
            and facts.get("event") in rule.events
        )
    return False


def names_place(triggers: TriggerSettings, source: str, facts: dict[str, Any]) -> bool:
    """A workflow that lists the channel (not a direct message) or the project itself comes before one taking any."""
    if source == "slack" and triggers.slack is not None:
        return not facts.get("direct_message") and facts.get("channel") in triggers.slack.channels
    return source == "jira" and triggers.jira is not None and facts.get("project") in triggers.jira.projects


few = st.sampled_from(["C1", "C2", "*", "PROJ", "OPS", "Bug", "Task", "jira", "+1", "ops"])
picks = st.lists(few, max_size=3, unique=True).map(tuple)
slack_rules = st.builds(SlackTrigger, channels=picks, direct_messages=st.booleans(), reactions=picks)
jira_rules = st.builds(JiraTrigger, projects=picks, issue_types=picks, labels=picks,
                       events=st.sampled_from([JIRA_EVENTS, ("comment_created",), ()]))  # fmt: skip
triggers = st.builds(TriggerSettings, slack=st.none() | slack_rules, jira=st.none() | jira_rules)
slack_events = st.one_of(  # as Slack's parser makes them: a reaction is never in a direct message
    st.fixed_dictionaries({"channel": few, "direct_message": st.booleans()}),
    st.fixed_dictionaries({"channel": few, "direct_message": st.just(False), "reaction": few}),
).map(lambda facts: ("slack", facts))
jira_events = st.fixed_dictionaries({"project": few, "issue_type": few, "labels": picks.map(list),
                                     "event": st.sampled_from(JIRA_EVENTS)}).map(lambda f: ("jira", f))  # fmt: skip
other_events = st.tuples(st.sampled_from(["webhook", "schedule", "api", "form"]), st.just({"channel": "C1"}))


@settings(max_examples=150, deadline=None)
@given(rules=st.lists(triggers, min_size=1, max_size=3), incoming=slack_events | jira_events | other_events)
def test_routing_reads_each_workflows_triggers_as_it_did(rules: list[TriggerSettings], incoming: Any) -> None:
    """As before sources had a home, but for one rule: a workflow that names the event's channel or project comes
    before one that takes any (a newcomer's incident-helper for its channel was shadowed by a `*` workflow)."""
    source, facts = incoming
    kind = "reaction_added" if facts.get("reaction") else "app_mention" if source == "slack" else "x"
    flows = [replace(make_workflow(), name=f"flow-{i}", triggers=rule) for i, rule in enumerate(rules)]
    event = TriggerEvent(source, kind, "k", "", "u", "t", "c", attributes=facts)
    taking = [f for f in flows if old_matches(f.triggers, source, facts)]
    naming = [f for f in taking if names_place(f.triggers, source, facts)]
    expected = (naming or taking)[0].name if taking else None
    assert BUILTIN.route(event, reversed(flows)) == expected  # one naming the place, else the first by name
    if source == "slack" and facts["direct_message"] and "reaction" not in facts:  # the pane routes as its DMs
        pane = PaneEvent("opened", "k", "T1", str(facts["channel"]), "U1")
        assert BUILTIN.route(pane, flows) == expected


def test_every_sources_route_is_one_the_stack_serves() -> None:
    """On AWS a route exists only where template.yaml declares it (``serve`` takes any path): each source's POST
    route is there, and every POST route there is a source's or one every source shares."""
    from tests.template_support import TEMPLATE

    events = [event["Properties"] for resource in TEMPLATE["Resources"].values()
              for event in (resource.get("Properties") or {}).get("Events", {}).values()
              if event.get("Type") == "HttpApi"]  # fmt: skip
    posted = {str(event["Path"]).strip('"') for event in events if event["Method"] == "POST"}
    routes = {str(source.route).replace("<", "{").replace(">", "}") for source in BUILTIN.routed()}
    assert posted == routes | {"/slack/interactivity", "/runs/{run_id}/stop"}
