"""The ops workflow and its mutating tool, and the approval requests it makes: asked in Slack, clicked, answered."""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

from tests.triggers_support import slack_mention, slack_request

OPS = """\
name: ops-actions
description: Does operational actions, with approval.
prompt: You operate services.
model: {{name: gpt-4o, context_window: 128000, max_output_tokens: 1024}}
tools:
  python: [ops_tools:restart_service]
  approval_timeout_hours: 1
{approvers}
triggers:
  slack: {{channels: [C0OPS]}}
"""
TOOL = '''
import os
from pathlib import Path
from agent_runtime import tool

@tool(mutating=True)
def restart_service(service: str) -> str:
    """Restart a service.

    Args:
        service: Its name.
    """
    log = Path(os.environ["OPS_LOG"])  # the module is imported once per process; each test has its own log
    log.write_text(log.read_text() + service + "\\n" if log.exists() else service + "\\n")
    return f"restarted {service}"


@tool
def drain_report(service: str) -> str:
    """Report what a service would drop if drained (read-only).

    Args:
        service: Its name.
    """
    return f"{service}: 3 jobs in flight"
'''


def mention(event_id: str, text: str, ts: str) -> dict[str, Any]:
    return slack_mention(event_id, channel="C0OPS", ts=ts, thread_ts="1763800000.000100", text=f"<@U0BOT> {text}")


def asks_approval(message: dict[str, Any]) -> bool:
    """An approval request (the working message has blocks too: its Stop button)."""
    return "approval_approve" in json.dumps(message.get("blocks") or [])


def approval_value(s: Any) -> tuple[str, dict[str, Any]]:
    [asked] = [m for m in s.apis.named("chat.postMessage") if asks_approval(m)]
    blocks = asked["blocks"] if isinstance(asked["blocks"], list) else json.loads(asked["blocks"])
    buttons = next(b for b in blocks if b["type"] == "actions")["elements"]
    return buttons[0]["value"], asked


def click(s: Any, value: str, user: str, action: str = "approval_approve", **sign: Any) -> dict[str, Any]:
    payload = {"type": "block_actions", "user": {"id": user}, "trigger_id": f"trig-{time.time_ns()}",
               "actions": [{"action_id": action, "value": value, "action_ts": str(time.time())}]}  # fmt: skip
    body = urllib.parse.urlencode({"payload": json.dumps(payload)}).encode()
    signed_body, headers = slack_request(body, **sign)
    return s.post("/slack/interactivity", signed_body, headers | {"Content-Type": "application/x-www-form-urlencoded"})


def asked_ts(s: Any) -> str:
    posted = s.apis.named("chat.postMessage")
    index = next(i for i, m in enumerate(posted) if asks_approval(m))
    return f"1763800100.{index + 1:06d}"  # the fake API numbers the messages it was sent


def jira_says(text: str, comment_id: str, author: str) -> dict[str, Any]:
    from tests.triggers_support import jira_comment

    payload = jira_comment(comment_id, project="OPS", author=author)
    payload["comment"]["body"]["content"][0]["content"][0]["text"] = text
    return payload
