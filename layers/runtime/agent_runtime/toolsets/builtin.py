"""Built-in Slack and JIRA tools, on the credentials the runtime already has for its triggers and replies.

``slack_thread`` reads the thread the run started from (or another one), ``jira_issue`` an issue's fields,
description, comments and attachments list, ``jira_search`` a JQL search. Large results become virtual files
like any tool result.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..adf import adf_text
from ..chat.channels import slack_line
from ..chat.exceptions import ReplyError
from ..chat.replies import JiraReplier, SlackReplier
from ..errors import ToolError
from ..tools import Tool, tool

THREAD_PAGE = 200
SEARCH_PAGE = 50
ISSUE_FIELDS = (
    "summary,status,issuetype,priority,assignee,reporter,labels,created,updated,description,comment,attachment"
)


JIRA_SETTINGS = "JIRA_BASE_URL, JIRA_EMAIL and JIRA_API_TOKEN"
NEEDS = {
    "slack_thread": ("slack", "SLACK_BOT_TOKEN"),
    "jira_issue": ("jira", JIRA_SETTINGS),
    "jira_search": ("jira", JIRA_SETTINGS),
}  # fmt: skip  (each built-in's client, and what sets it locally)


def builtin_tools(
    names: tuple[str, ...], *, slack: SlackReplier | None, jira: JiraReplier | None, origin: Mapping[str, str]
) -> list[Tool]:
    """The built-ins whose client is here; the others are left out (``without_credentials`` says which)."""
    made: list[Tool] = []
    for name in names:
        if name == "slack_thread" and slack is not None:
            made.append(_slack_thread(slack, origin))
        elif name == "jira_issue" and jira is not None:
            made.append(_jira_issue(jira, origin))
        elif name == "jira_search" and jira is not None:
            made.append(_jira_search(jira))
    return made


def without_credentials(names: tuple[str, ...], *, slack: object, jira: object) -> dict[str, str]:
    """Each named built-in whose client is missing → why, in one phrase: a run goes on without that tool (a local
    run with nothing configured, a JIRA-only stack), and the model is told."""
    clients = {"slack": slack, "jira": jira}
    return {n: f"no credentials ({NEEDS[n][1]})" for n in names if n in NEEDS and clients[NEEDS[n][0]] is None}


def _slack_thread(slack: SlackReplier, origin: Mapping[str, str]) -> Tool:
    here = (origin.get("channel"), origin.get("thread_ts")) if origin.get("source") == "slack" else (None, None)

    def slack_thread(channel: str | None = None, thread_ts: str | None = None, cursor: str | None = None) -> str:
        """Read a Slack thread's messages, oldest first: by default the thread this run was started from.

        Args:
            channel: The channel id (default: this run's channel).
            thread_ts: The thread's timestamp (default: this run's thread).
            cursor: The cursor from a previous page, to read on.
        """
        where, ts = channel or here[0], thread_ts or here[1]
        if not where or not ts:
            raise ToolError("this run did not start in a Slack thread: give channel and thread_ts")
        try:
            messages, following = slack.thread(where, ts, cursor=cursor, limit=THREAD_PAGE)
        except ReplyError as error:
            raise ToolError(str(error)) from None
        lines = [slack_line(m) for m in messages]
        if following:
            lines.append(f'[more messages: slack_thread(channel="{where}", thread_ts="{ts}", cursor="{following}")]')
        return "\n".join(lines) or "(no messages)"

    return tool(slack_thread, offload=True)


def _jira_issue(jira: JiraReplier, origin: Mapping[str, str]) -> Tool:
    here = origin.get("issue_key") if origin.get("source") == "jira" else None

    def jira_issue(key: str | None = None) -> str:
        """Read a JIRA issue: its fields, description, comments and the list of its attachments.

        Args:
            key: The issue key, such as PROJ-123 (default: the issue this run was started from).
        """
        target = key or here
        if not target:
            raise ToolError("this run did not start from a JIRA issue: give the issue key")
        try:
            issue = jira.get(f"/rest/api/3/issue/{target}", {"fields": ISSUE_FIELDS})
        except ReplyError as error:
            raise ToolError(str(error)) from None
        return _render_issue(issue)

    return tool(jira_issue)


def _render_issue(issue: Mapping[str, Any]) -> str:
    fields = issue.get("fields") or {}

    def name(value: Any) -> str:
        return str((value or {}).get("displayName") or (value or {}).get("name") or "-")

    lines = [
        f"# {issue.get('key')}: {fields.get('summary', '')}",
        f"type: {name(fields.get('issuetype'))} · status: {name(fields.get('status'))} · priority: "
        f"{name(fields.get('priority'))} · assignee: {name(fields.get('assignee'))} · reporter: "
        f"{name(fields.get('reporter'))} · labels: {', '.join(fields.get('labels') or []) or '-'}",
        f"created {fields.get('created', '-')} · updated {fields.get('updated', '-')}",
        "",
        "## Description",
        adf_text(fields.get("description")) or "(none)",
    ]
    comments = (fields.get("comment") or {}).get("comments") or []
    lines += ["", f"## Comments ({len(comments)})"]
    lines += [f"- {name(c.get('author'))} at {c.get('created', '-')}: {adf_text(c.get('body'))}" for c in comments]
    attachments = fields.get("attachment") or []
    lines += ["", f"## Attachments ({len(attachments)})"]
    lines += [f"- {a.get('filename')} ({a.get('mimeType')}, {a.get('size', 0):,} bytes)" for a in attachments]
    return "\n".join(lines)


def _jira_search(jira: JiraReplier) -> Tool:
    def jira_search(jql: str, next_page_token: str | None = None) -> str:
        """Search JIRA issues with JQL; one line per issue, newest pages on request.

        Args:
            jql: The JQL query, such as: project = PROJ AND text ~ "timeout" ORDER BY created DESC
            next_page_token: The token from a previous page, to read on.
        """
        params = {"jql": jql, "maxResults": str(SEARCH_PAGE), "fields": "summary,status,created"}
        if next_page_token:
            params["nextPageToken"] = next_page_token
        try:
            page = jira.get("/rest/api/3/search/jql", params)
        except ReplyError as error:
            raise ToolError(str(error)) from None
        issues = page.get("issues") or []
        lines = [
            f"{i.get('key')}: {(i.get('fields') or {}).get('summary', '')} "
            f"[{((i.get('fields') or {}).get('status') or {}).get('name', '-')}]"
            for i in issues
        ]
        if page.get("nextPageToken"):
            lines.append(f'[more results: jira_search(jql=..., next_page_token="{page["nextPageToken"]}")]')
        return "\n".join(lines) or "(no issues match)"

    return tool(jira_search)
