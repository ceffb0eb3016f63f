"""Where the members of access groups are read: Slack user groups and JIRA groups, with the process's chat
clients as they are now (they are replaced once secrets load)."""

from __future__ import annotations

from ..access import DirectoryError
from ..chat.channels import Replies
from ..chat.exceptions import ReplyError


class ChatDirectory:
    """Slack user groups and JIRA groups, read with the process's chat clients (as they are now)."""

    def __init__(self, replies: Replies) -> None:
        self.replies = replies

    def slack_usergroup(self, group_id: str) -> frozenset[str]:
        if self.replies.slack is None:
            raise DirectoryError("no Slack credentials to read user groups")
        try:
            return self.replies.slack.usergroup_members(group_id)
        except ReplyError as error:
            raise DirectoryError(f"Slack user group {group_id}: {error}") from None

    def jira_groups(self, account_id: str) -> frozenset[str]:
        if self.replies.jira is None:
            raise DirectoryError("no JIRA credentials to read groups")
        try:
            return self.replies.jira.groups_of(account_id)
        except ReplyError as error:
            raise DirectoryError(str(error)) from None
