"""Example tools for examples/workflows/jira-from-reaction.yaml: create a JIRA issue (REST v3).

Copy into tools/ (the ToolsLayer) to use. Credentials come from the environment the worker already has for JIRA
(JIRA_BASE_URL, JIRA_EMAIL, and JIRA_API_TOKEN or the integrations secret's jira_api_token)."""

from __future__ import annotations

import base64
import json
import os
import urllib.request

from agent_runtime import tool
from agent_runtime.adf import to_adf


@tool(mutating=True)
def create_issue(project: str, summary: str, description: str, issue_type: str = "Task") -> str:
    """Create a JIRA issue and return its key and link. Asks for approval first (it changes JIRA).

    Args:
        project: The project key, e.g. PROJ.
        summary: One line.
        description: The issue's body (Markdown).
        issue_type: Task, Bug, Story...
    """
    base = os.environ["JIRA_BASE_URL"].rstrip("/")
    token = os.environ.get("JIRA_API_TOKEN", "")
    auth = base64.b64encode(f"{os.environ['JIRA_EMAIL']}:{token}".encode()).decode()
    fields = {"project": {"key": project}, "summary": summary[:250], "issuetype": {"name": issue_type},
              "description": to_adf(description)}  # fmt: skip
    request = urllib.request.Request(
        f"{base}/rest/api/3/issue",
        data=json.dumps({"fields": fields}).encode(),
        headers={"Authorization": f"Basic {auth}", "Content-Type": "application/json", "Accept": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=30) as response:  # the configured JIRA site
        key = json.load(response)["key"]
    return f"created {key}: {base}/browse/{key}"
