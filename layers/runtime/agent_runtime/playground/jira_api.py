"""JIRA Cloud's REST API (v3), served by the playground at ``JIRA_BASE_URL``: the calls the runtime makes (a
comment in Atlassian Document Format, an issue read, a JQL search, attachments up and down) and creating an issue
(a tool may), on the issues the page made. Basic auth with the bot's email and API token, as JIRA Cloud wants.

JQL is read only as far as the playground needs: ``project = KEY``, ``key = KEY-1`` and ``text ~ "words"``
narrow the search; anything else (dates, ordering) is accepted and leaves the issues as they are.
"""

from __future__ import annotations

import base64
import email.parser
import email.policy
import json
import mimetypes
import re
import secrets
import urllib.parse
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from ..adf import adf_text, to_adf
from .layout import JIRA_BOT_ACCOUNT
from .workspace import ISSUE, Workspace

MAX_COMMENT_CHARS = 32_767  # JIRA Cloud refuses a longer comment ("exceeds the allowed limit")
Answer = tuple[int, bytes, str]
_ISSUE = re.compile(r"/rest/api/3/issue/([A-Z][A-Z0-9_]*-\d+)(/comment|/attachments)?")
_CONTENT = re.compile(r"/rest/api/3/attachment/content/(\d+)")
_PROJECT = re.compile(r"[A-Z][A-Z0-9_]{1,9}")  # JIRA's default project key: a capital, then up to 9 more
_JQL = re.compile(r'\b(project|key)\s*=\s*"?([A-Za-z0-9_-]+)"?|\btext\s*~\s*"([^"]*)"', re.IGNORECASE)


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.000+0000")


class JiraApi:
    def __init__(self, workspace: Workspace, *, email: str, token: str, base: str) -> None:
        self.workspace, self.base = workspace, base.rstrip("/")
        self.auth = "Basic " + base64.b64encode(f"{email}:{token}".encode()).decode()

    def serve(self, verb: str, path: str, headers: Mapping[str, str], query: str, body: bytes) -> Answer:
        given = {k.lower(): v for k, v in headers.items()}
        if not secrets.compare_digest(given.get("authorization", "").encode(), self.auth.encode()):
            return _error(401, "Client must be authenticated to access this resource.")
        if verb == "GET" and (found := _CONTENT.fullmatch(path)):
            return self._content(found.group(1))
        if verb == "GET" and path == "/rest/api/3/search/jql":
            return _ok(self._search(dict(urllib.parse.parse_qsl(query))))
        if verb == "POST" and path == "/rest/api/3/issue":
            return self._create(body)
        match = _ISSUE.fullmatch(path)
        issue = self.workspace.get(ISSUE, match.group(1)) if match else None
        if match is None or issue is None:
            return _error(404, "Issue does not exist or you do not have permission to see it.")
        if verb == "GET" and not match.group(2):
            return _ok(issue)
        if verb == "POST" and match.group(2) == "/comment":
            return self._comment(issue, body)
        if verb == "POST" and match.group(2) == "/attachments":
            if given.get("x-atlassian-token") != "no-check":
                return _error(403, "XSRF check failed")
            return self._attach(issue, given.get("content-type", ""), body)
        return _error(405, "Method not allowed")

    def _comment(self, issue: dict[str, Any], body: bytes) -> Answer:
        try:
            doc = json.loads(body)["body"]
        except (ValueError, KeyError, TypeError):
            return _error(400, "Comment body can not be empty!")
        if len(adf_text(doc)) > MAX_COMMENT_CHARS:
            return _error(400, f"The entered text is too long. It exceeds the allowed limit of {MAX_COMMENT_CHARS:,}")
        comment = add_comment(self.workspace, issue, doc, {"accountId": JIRA_BOT_ACCOUNT, "displayName": "agent"})
        return 201, json.dumps(comment).encode(), "application/json"

    def _attach(self, issue: dict[str, Any], kind: str, body: bytes) -> Answer:
        parsed = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            f"Content-Type: {kind}\r\n\r\n".encode() + body
        )
        if not parsed.is_multipart():
            return _error(400, "the request is not multipart/form-data")
        made = []
        for part in parsed.iter_parts():
            data = part.get_payload(decode=True)
            if isinstance(data, bytes):
                made.append(attach(self.workspace, issue, str(part.get_filename() or "file"), data, self.base))
        self.workspace.put(ISSUE, issue["key"], issue)
        return 200, json.dumps(made).encode(), "application/json"

    def _content(self, attachment_id: str) -> Answer:
        data = self.workspace.blob(f"jira-{attachment_id}")
        return (200, data, "application/octet-stream") if data is not None else _error(404, "no such attachment")

    def _search(self, params: dict[str, str]) -> dict[str, Any]:
        issues = self.workspace.all(ISSUE)
        for field, value, words in _JQL.findall(params.get("jql", "")):
            if field.lower() == "project":
                issues = [i for i in issues if i["fields"]["project"]["key"].lower() == value.lower()]
            elif field.lower() == "key":
                issues = [i for i in issues if i["key"].lower() == value.lower()]
            else:
                issues = [i for i in issues if words.lower() in json.dumps(i["fields"]).lower()]
        start, size = int(params.get("nextPageToken") or 0), max(1, min(100, int(params.get("maxResults") or 50)))
        page = issues[start : start + size]
        found: dict[str, Any] = {"issues": page, "isLast": start + size >= len(issues)}
        return found | ({} if found["isLast"] else {"nextPageToken": str(start + size)})

    def _create(self, body: bytes) -> Answer:
        try:
            fields = json.loads(body)["fields"]
            project, summary = str(fields["project"]["key"]), str(fields["summary"])
        except (ValueError, KeyError, TypeError):
            return _error(400, "project and summary are required")
        if not _PROJECT.fullmatch(project):  # JIRA Cloud: no such project, and a key is never this
            return (
                400,
                json.dumps({"errorMessages": [], "errors": {"project": "valid project is required"}}).encode(),
                ("application/json"),
            )
        kind = str((fields.get("issuetype") or {}).get("name") or "Task")
        issue = new_issue(self.workspace, project, kind, summary, fields.get("description"), [], JIRA_BOT_ACCOUNT)
        answer = {"id": issue["id"], "key": issue["key"], "self": f"{self.base}/rest/api/3/issue/{issue['id']}"}
        return 201, json.dumps(answer).encode(), "application/json"


def new_issue(
    workspace: Workspace, project: str, kind: str, summary: str, description: Any, labels: list[str], who: str
) -> dict[str, Any]:
    """An issue as JIRA Cloud's REST API shows it (the fields the runtime reads), numbered in its project."""
    with workspace.lock:
        number = 1 + sum(1 for i in workspace.all(ISSUE) if i["fields"]["project"]["key"] == project)
        issue_id = str(10_000 + len(workspace.all(ISSUE)) + 1)
        doc = description if isinstance(description, dict) else to_adf(str(description or "")) if description else None
        person = {"accountId": who, "displayName": who.removeprefix("pg-").title()}
        fields: dict[str, Any] = {"summary": summary, "description": doc, "issuetype": {"name": kind}}
        fields |= {"labels": labels}
        fields |= {"project": {"key": project, "name": project}, "status": {"name": "To Do"}}
        fields |= {"priority": {"name": "Medium"}, "reporter": person, "assignee": None}
        fields |= {"created": now_iso(), "updated": now_iso(), "comment": {"comments": [], "total": 0}}
        fields |= {"attachment": []}
        key = f"{project}-{number}"
        issue = {"id": issue_id, "key": key, "fields": fields}
        workspace.put(ISSUE, key, issue)
        return issue


def add_comment(workspace: Workspace, issue: dict[str, Any], doc: Any, author: dict[str, str]) -> dict[str, Any]:
    with workspace.lock:
        current = workspace.get(ISSUE, issue["key"]) or issue
        comments = current["fields"]["comment"]["comments"]
        number = 20_000 + sum(len(i["fields"]["comment"]["comments"]) for i in workspace.all(ISSUE))
        comment = {"id": str(number), "author": author, "body": doc, "created": now_iso(), "updated": now_iso()}
        comments.append(comment)
        current["fields"]["comment"]["total"] = len(comments)
        current["fields"]["updated"] = now_iso()
        workspace.put(ISSUE, current["key"], current)
        issue.update(current)
        return comment


def attach(workspace: Workspace, issue: dict[str, Any], name: str, data: bytes, base: str) -> dict[str, Any]:
    """A file on the issue (its bytes kept apart), described as JIRA lists attachments."""
    attachment_id = str(10_000 + secrets.randbelow(10**9))
    workspace.put_blob(f"jira-{attachment_id}", data)
    kind = mimetypes.guess_type(name)[0] or "application/octet-stream"
    described = {"id": attachment_id, "filename": name[:255], "size": len(data), "mimeType": kind}
    described |= {"created": now_iso(), "content": f"{base}/rest/api/3/attachment/content/{attachment_id}"}
    issue["fields"]["attachment"].append(described)
    return described


def _ok(body: dict[str, Any]) -> Answer:
    return 200, json.dumps(body).encode(), "application/json"


def _error(status: int, message: str) -> Answer:
    return status, json.dumps({"errorMessages": [message], "errors": {}}).encode(), "application/json"
