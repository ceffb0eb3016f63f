"""The workflow's ``triggers:`` section: which Slack and JIRA events start it. No section: started only by name."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..sections import check_keys, flag

SLACK_KEYS = ("channels", "direct_messages")
JIRA_KEYS = ("projects", "issue_types", "labels", "events")
JIRA_EVENTS = ("comment_created", "issue_created")


@dataclass(frozen=True, slots=True)
class SlackTrigger:
    channels: tuple[str, ...] = ()  # channel ids where a mention starts the workflow; "*" for any
    direct_messages: bool = False


@dataclass(frozen=True, slots=True)
class JiraTrigger:
    projects: tuple[str, ...] = ()  # project keys; "*" for any
    issue_types: tuple[str, ...] = ()  # empty: any
    labels: tuple[str, ...] = ()  # empty: any; else the issue must carry one of them
    events: tuple[str, ...] = JIRA_EVENTS


class Routed(Protocol):
    """What routing reads of an incoming event (a ``triggers.TriggerEvent``): workflows sit below triggers."""

    @property
    def source(self) -> str: ...

    @property
    def attributes(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True, slots=True)
class TriggerSettings:
    slack: SlackTrigger | None = None
    jira: JiraTrigger | None = None

    def matches(self, event: Routed) -> bool:
        facts = event.attributes
        if event.source == "slack" and self.slack is not None:
            if facts.get("direct_message"):
                return self.slack.direct_messages
            return "*" in self.slack.channels or facts.get("channel") in self.slack.channels
        if event.source == "jira" and self.jira is not None:
            rule = self.jira
            return (
                ("*" in rule.projects or facts.get("project") in rule.projects)
                and (not rule.issue_types or facts.get("issue_type") in rule.issue_types)
                and (not rule.labels or bool(set(rule.labels) & set(facts.get("labels", ()))))
                and facts.get("event") in rule.events
            )
        return False


def parse_triggers_section(data: Mapping[str, Any], report: Callable[[str, str], None]) -> TriggerSettings:
    check_keys("triggers", data, ("slack", "jira"), report)
    slack, jira = data.get("slack"), data.get("jira")
    return TriggerSettings(
        slack=_slack(slack, report) if slack is not None else None,
        jira=_jira(jira, report) if jira is not None else None,
    )


def _slack(data: Any, report: Callable[[str, str], None]) -> SlackTrigger:
    if not isinstance(data, Mapping):
        report("triggers.slack", "must be a mapping (channels, direct_messages)")
        return SlackTrigger()
    check_keys("triggers.slack", data, SLACK_KEYS, report)
    dms = flag("triggers.slack", data, "direct_messages", report)
    return SlackTrigger(_names(data, "channels", "triggers.slack", report), dms)


def _jira(data: Any, report: Callable[[str, str], None]) -> JiraTrigger:
    if not isinstance(data, Mapping):
        report("triggers.jira", "must be a mapping (projects, issue_types, labels, events)")
        return JiraTrigger()
    check_keys("triggers.jira", data, JIRA_KEYS, report)
    events = _names(data, "events", "triggers.jira", report) or JIRA_EVENTS
    for name in events:
        if name not in JIRA_EVENTS:
            report("triggers.jira.events", f"unknown event {name!r}; allowed: {', '.join(JIRA_EVENTS)}")
    projects = _names(data, "projects", "triggers.jira", report)
    if not projects:
        report("triggers.jira.projects", "name at least one project key (or '*')")
    return JiraTrigger(
        projects,
        _names(data, "issue_types", "triggers.jira", report),
        _names(data, "labels", "triggers.jira", report),
        events,
    )


def _names(data: Mapping[str, Any], key: str, where: str, report: Callable[[str, str], None]) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, Sequence) or isinstance(value, str) or not all(isinstance(v, str) for v in value):
        report(f"{where}.{key}", "must be a list of strings")
        return ()
    return tuple(value)
