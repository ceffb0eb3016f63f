"""The workflow's ``access:`` section: who may start it, who may decide its approvals, and which of its declared
tools each group's runs are offered — in one place, for an auditor to read.

```yaml
access:
  groups:                          # a group: people, named by where they come from (any key may be left out)
    oncall:
      slack_users: [U0123LEAD]       # Slack user ids
      slack_usergroups: [S0123SRE]   # Slack user groups (read with usergroups.users.list: usergroups:read)
      slack_channels: [C0123OPS]     # anyone who writes (or reacts) in these channels
      jira_users: [5b10a2844c20165700ede21g]   # Atlassian account ids
      jira_groups: [site-admins]     # JIRA groups (read with /rest/api/3/user/groups)
      jira_projects: [OPS]           # anyone who comments in these projects
      webhook_senders: [octocat]     # a signed webhook's sender (GitHub's login, Notion's author id)
      schedules: [weekly-report]     # the workflow's schedules, by name
      api_callers: ["arn:aws:iam::123456789012:user/ci", api-key]   # /runs callers: an IAM ARN, or api-key
  start: [oncall]                  # who may start it; left out: whoever its triggers hear (as without rules)
  approve: [leads]                 # who may decide its approvals, besides tools.approvers
  tools:                           # group → the declared tools its members' runs are offered (names, or name_*)
    oncall: ["*"]
    support: [slack_thread, notion_search]
```

Without the section a workflow behaves as before: anyone its triggers hear starts it, ``tools.approvers`` decide,
every declared tool is offered. ``"*"`` in a list of people is anyone of that kind. The rules are evaluated by
``agent_runtime.access``; here they are only read and checked.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..sections import Report, check_keys, mapping

KEYS = ("groups", "start", "approve", "tools")
# A group's members, by kind: its key in YAML, and the source whose events it matches.
MEMBER_KEYS = (
    "slack_users",
    "slack_usergroups",
    "slack_channels",
    "jira_users",
    "jira_groups",
    "jira_projects",
    "webhook_senders",
    "schedules",
    "api_callers",
)
GROUP_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
TOOL_PATTERN = re.compile(r"[A-Za-z0-9_*?-]{1,100}")  # a tool's name as the model sees it, or a shell-style pattern
MEMBER = re.compile(r"[^\s]{1,200}")  # an id as its source sends it: no spaces (an ARN, a login, a group's name)


@dataclass(frozen=True, slots=True)
class Group:
    """People, by where they come from: each field a tuple of ids (``"*"``: anyone of that kind)."""

    name: str
    slack_users: tuple[str, ...] = ()
    slack_usergroups: tuple[str, ...] = ()
    slack_channels: tuple[str, ...] = ()
    jira_users: tuple[str, ...] = ()
    jira_groups: tuple[str, ...] = ()
    jira_projects: tuple[str, ...] = ()
    webhook_senders: tuple[str, ...] = ()
    schedules: tuple[str, ...] = ()
    api_callers: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class AccessSettings:
    groups: Mapping[str, Group] = field(default_factory=lambda: MappingProxyType({}))
    start: tuple[str, ...] | None = None  # group names; None: whoever the triggers hear
    approve: tuple[str, ...] | None = None  # group names; None: tools.approvers alone
    tools: Mapping[str, tuple[str, ...]] | None = None  # group → tool names or patterns; None: every declared tool

    def __bool__(self) -> bool:
        return self.start is not None or self.approve is not None or self.tools is not None


def parse_access_section(data: Mapping[str, Any], report: Report) -> AccessSettings:
    check_keys("access", data, KEYS, report)
    groups = _groups(mapping("access", data, "groups", report), report)
    start = _group_list(data, "start", groups, report)
    approve = _group_list(data, "approve", groups, report)
    tools = _tools(data, groups, report) if "tools" in data else None
    return AccessSettings(MappingProxyType(groups), start, approve, tools)


def _groups(data: Mapping[str, Any], report: Report) -> dict[str, Group]:
    found: dict[str, Group] = {}
    for name, members in data.items():
        where = f"access.groups.{name}"
        if not isinstance(name, str) or not GROUP_NAME.fullmatch(name):
            report(where, "a group's name: lowercase letters, digits, '-' or '_', starting with a letter")
            continue
        if not isinstance(members, Mapping) or not members:
            report(where, f"must be a mapping of members by kind ({', '.join(MEMBER_KEYS)})")
            continue
        check_keys(where, members, MEMBER_KEYS, report)
        kinds = {key: _ids(members, key, where, report) for key in MEMBER_KEYS}
        found[name] = Group(name, **kinds)
    return found


def _ids(data: Mapping[str, Any], key: str, where: str, report: Report) -> tuple[str, ...]:
    value = data.get(key, [])
    if not isinstance(value, list) or not all(isinstance(v, str) and MEMBER.fullmatch(v) for v in value):
        report(f"{where}.{key}", "must be a list of ids (strings without spaces)")
        return ()
    return tuple(value)


def _group_list(
    data: Mapping[str, Any], key: str, groups: Mapping[str, Group], report: Report
) -> tuple[str, ...] | None:
    if key not in data:
        return None
    value = data[key]
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        report(f"access.{key}", "must be a list of group names (at least one; leave the key out for no rule)")
        return ()  # a rule that was meant: nobody passes it until it is fixed (validate says so first)
    for name in value:
        if name not in groups:
            report(f"access.{key}", f"no group {name!r} in access.groups")
    return tuple(value)


def _tools(data: Mapping[str, Any], groups: Mapping[str, Group], report: Report) -> Mapping[str, tuple[str, ...]]:
    value = data["tools"]
    if not isinstance(value, Mapping):
        report("access.tools", "must map group names to lists of tool names (or patterns such as notion_*)")
        return MappingProxyType({})
    found: dict[str, tuple[str, ...]] = {}
    for name, patterns in value.items():
        where = f"access.tools.{name}"
        if name not in groups:
            report(where, f"no group {name!r} in access.groups")
        if not isinstance(patterns, list) or not all(
            isinstance(p, str) and TOOL_PATTERN.fullmatch(p) for p in patterns
        ):
            report(where, "must be a list of tool names or patterns (letters, digits, '_', '-', '*', '?')")
            continue
        found[str(name)] = tuple(patterns)
    return MappingProxyType(found)
