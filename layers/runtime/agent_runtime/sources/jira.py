"""JIRA: a comment or a new issue (``POST /jira/webhook``), for the workflows whose ``triggers.jira`` takes its
project, issue type, labels and event. The answer is a comment on the issue; a comment that is just "approve" or
"deny" (with the request's code, or alone when one request waits) decides the approval its issue's run waits for.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..access import Requester
from ..inbound import TriggerEvent
from ..triggers import jira
from ..triggers.queued import DECISIONS
from .base import Chat, Intake, Request, Routed, Source, safe

if TYPE_CHECKING:
    from ..chat.channels import Channel
    from ..workflows import Workflow

DECISION = re.compile(r"^\s*(approve|approved|deny|denied)(?:\s+([0-9a-f]{6}))?\s*[.!]?\s*$", re.IGNORECASE)


class Jira(Source):
    name = "jira"
    route = "/jira/webhook"

    def parse(self, request: Request) -> Intake:
        body, config = request.body, request.config
        webhook_secret, shared = config.secret("jira_webhook_secret"), config.secret("jira_shared_secret")
        jira.verify(request.headers, body, webhook_secret=webhook_secret, shared_secret=shared)
        return jira.parse(body, bot_account_id=config.jira_bot_account_id, now=request.now)

    def matches(self, workflow: Workflow, event: Routed) -> bool:
        rule, facts = workflow.triggers.jira, event.attributes
        return rule is not None and (
            ("*" in rule.projects or facts.get("project") in rule.projects)
            and (not rule.issue_types or facts.get("issue_type") in rule.issue_types)
            and (not rule.labels or bool(set(rule.labels) & set(facts.get("labels", ()))))
            and facts.get("event") in rule.events
        )

    def named(self, workflow: Workflow, event: Routed) -> bool:
        rule = workflow.triggers.jira
        return rule is not None and event.attributes.get("project") in rule.projects

    def channel(self, event: TriggerEvent, chat: Chat, run_id: str) -> Channel:
        found = chat.issue(event.reply_to["issue_key"]) if chat.jira is not None else None
        return found if found is not None else chat.nowhere(event.source)

    def described(self, event: TriggerEvent) -> str:
        return f"jira {event.kind} on {safe(str(event.reply_to.get('issue_key')))}"

    def decision(self, event: TriggerEvent) -> tuple[str, str | None] | None:
        return decision(event.text)

    def requester(self, event: TriggerEvent) -> Requester:
        """The comment's author (or the issue's creator), in the issue's project."""
        project = str(event.attributes.get("project") or "")
        ids = (("jira_users", event.user), ("jira_projects", project), ("jira_groups", event.user))
        return Requester(f"jira:{event.user}", event.user, ids)


def decision(text: str) -> tuple[str, str | None] | None:
    """A comment that is just "approve" or "deny", with the request's code or without (a reply to an approval
    request): the decision and the code."""
    match = DECISION.match(text or "")
    if match is None:
        return None
    said = DECISIONS[0] if match.group(1).lower().startswith("approv") else DECISIONS[1]  # approved, denied
    return said, (match.group(2) or "").lower() or None
