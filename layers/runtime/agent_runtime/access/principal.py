"""Who asked: the requester of a run as its trigger source names them, and whether they are in an access group.

A requester is an id in the namespace of its source (a Slack user id, an Atlassian account id, a webhook's
sender, a schedule's name, an API caller's ARN) with where they asked (a channel, a project). A group lists
people by those namespaces (``workflows/access.py``); two kinds need a directory to read their members: Slack user
groups and JIRA groups. A directory that cannot answer makes no one a member, and says why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..errors import AgentRuntimeError
from ..workflows.access import Group

ANYONE = "*"


class DirectoryError(AgentRuntimeError):
    """A group's members could not be read (no credentials, a missing scope, the API down)."""


class Directory(Protocol):
    """Where the members of Slack user groups and the groups of a JIRA account are read."""

    def slack_usergroup(self, group_id: str) -> frozenset[str]:
        """The user ids of a Slack user group (``usergroups.users.list``)."""
        ...

    def jira_groups(self, account_id: str) -> frozenset[str]:
        """The names of the JIRA groups an account is in (``/rest/api/3/user/groups``)."""
        ...


class NoDirectory:
    """A process without chat credentials (the webhook, the CLI): no group can be read."""

    def slack_usergroup(self, group_id: str) -> frozenset[str]:
        raise DirectoryError("no Slack credentials here to read user groups")

    def jira_groups(self, account_id: str) -> frozenset[str]:
        raise DirectoryError("no JIRA credentials here to read groups")


@dataclass(frozen=True, slots=True)
class Requester:
    """The person (or system) a run is for, as its trigger source names them (``Source.requester``): one id across
    sources (``person``: ``slack:U0123``, for budgets and ``runs stats --by person``), the id the source gives
    (``user``), and the ids a group may list them by — ``(key, id)`` pairs whose key is a group's (``slack_users``,
    ``slack_channels``, ...). For a group read from a directory the id is the one to look up (``slack_usergroups``:
    the user id; ``jira_groups``: the account id)."""

    person: str
    user: str
    ids: tuple[tuple[str, str], ...] = ()

    def id(self, key: str) -> str | None:
        return next((value for name, value in self.ids if name == key and value), None)


LOOKED_UP = ("slack_usergroups", "jira_groups")  # the members' kinds only a directory can read


def listed(ids: tuple[str, ...], value: str | None) -> bool:
    return bool(value) and (ANYONE in ids or value in ids)


def statically_in(group: Group, who: Requester) -> bool | None:
    """Whether ``who`` is in ``group`` from the ids it lists alone; None when only a directory can tell."""
    if any(listed(getattr(group, key), value) for key, value in who.ids if key not in LOOKED_UP):
        return True
    return None if any(getattr(group, key) and who.id(key) for key in LOOKED_UP) else False


def looked_up(group: Group, who: Requester, directory: Directory) -> bool:
    """Whether ``who`` is in one of the group's Slack user groups or JIRA groups. One that cannot be read does not
    keep out a person another lets in; when none lets them in and one could not be read, ``DirectoryError`` says
    which (their membership is unknown, not denied)."""
    user, account, problems = who.id("slack_usergroups"), who.id("jira_groups"), []
    for group_id in group.slack_usergroups if user else ():
        try:
            if group_id == ANYONE or user in directory.slack_usergroup(group_id):
                return True
        except DirectoryError as error:
            problems.append(str(error))
    if account and group.jira_groups:
        try:
            if ANYONE in group.jira_groups or directory.jira_groups(account) & set(group.jira_groups):
                return True
        except DirectoryError as error:
            problems.append(str(error))
    if problems:
        raise DirectoryError("; ".join(problems))
    return False
