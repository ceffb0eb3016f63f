"""Example tools and coordinator for examples/workflows/merged-prs.yaml: mark merged pull requests with :merged:.

Slack through slack_sdk with SLACK_BOT_TOKEN (channels:history, reactions:write); GitHub's REST API with
GITHUB_TOKEN. The coordinator asks no model: code decides what is merged."""

from __future__ import annotations

import json
import os
import re
import urllib.request
from typing import Any

from agent_runtime import tool
from agent_runtime.coordinator import ToolFailed

CHANNEL = os.environ.get("MERGED_PRS_CHANNEL", "C0ENG")
PR_LINK = re.compile(r"https://github\.com/([\w.-]+)/([\w.-]+)/pull/(\d+)")


def _slack() -> Any:
    from slack_sdk import WebClient

    # SLACK_API_URL as the runtime's own client reads it: the playground (agent-runtime serve) sets it to its page
    return WebClient(
        token=os.environ["SLACK_BOT_TOKEN"], base_url=os.environ.get("SLACK_API_URL") or WebClient.BASE_URL
    )


@tool
def recent_pr_links(channel: str) -> str:
    """The channel's recent messages that link a GitHub pull request, one a line: ts, the link, marked or not.

    Args:
        channel: The Slack channel id.
    """
    history = _slack().conversations_history(channel=channel, limit=200)
    lines = []
    for message in history.get("messages", []):
        found = PR_LINK.search(message.get("text", ""))
        marked = any(r.get("name") == "merged" for r in message.get("reactions", []))
        if found:
            lines.append(f"{message['ts']} {found.group(0)} {'marked' if marked else 'unmarked'}")
    return "\n".join(lines)


@tool
def pr_merged(url: str) -> str:
    """Whether a GitHub pull request has merged: "merged" or "not merged".

    Args:
        url: https://github.com/owner/repo/pull/N
    """
    owner, repo, number = PR_LINK.fullmatch(url).groups()  # type: ignore[union-attr]
    request = urllib.request.Request(f"https://api.github.com/repos/{owner}/{repo}/pulls/{number}",
                                     headers={"Authorization": f"Bearer {os.environ['GITHUB_TOKEN']}",
                                              "Accept": "application/vnd.github+json"})  # fmt: skip
    with urllib.request.urlopen(request, timeout=20) as response:  # GitHub's API, a fixed host
        return "merged" if json.load(response).get("merged") else "not merged"


@tool(mutating=True)
def react(channel: str, ts: str, name: str) -> str:
    """Add a reaction to a message.

    Args:
        channel: The Slack channel id.
        ts: The message's ts.
        name: The emoji's name, without colons.
    """
    _slack().reactions_add(channel=channel, timestamp=ts, name=name)
    return f"reacted :{name}: to {ts}"


def mark_merged_prs(run: Any) -> str:
    """The coordinator: each unmarked link whose pull request merged gets :merged:, each a step of its own. A pull
    request GitHub does not answer for is said and skipped (``ToolFailed``); any other failure ends the run."""
    listed = run.call("recent_pr_links", channel=CHANNEL, step="list")
    marked, unknown = [], []
    for line in listed.splitlines():
        ts, url, state = line.split()
        run.progress(f"checking {url}")
        if state != "unmarked":
            continue
        try:
            merged = run.call("pr_merged", url=url, step=f"state {url}") == "merged"
        except ToolFailed as error:
            unknown.append(f"{url}: {error.reason}")
            continue
        if merged:
            run.call("react", channel=CHANNEL, ts=ts, name="merged", step=f"react {ts}")
            marked.append(url)
    answer = f"Marked {len(marked)} merged pull request(s)." + "".join(f"\n- {url}" for url in marked)
    return answer + "".join(f"\nNot checked: {line}" for line in unknown)
