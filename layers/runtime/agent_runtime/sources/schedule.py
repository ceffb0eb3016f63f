"""A workflow's schedule (``triggers.schedule``): EventBridge Scheduler's tick (``serve``'s locally) names its
workflow, so routing has nothing to match (``triggers/schedules.py`` makes its event). Its run starts in the
schedule's message group, not its thread's; it answers where ``answer_to`` says: a message of its own in a Slack
channel, a comment on a JIRA issue, or only its record."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..access import Requester
from ..inbound import TriggerEvent
from .base import Chat, Source

if TYPE_CHECKING:
    from ..chat.channels import Channel
    from ..workflows import Workflow


class Schedule(Source):
    name = "schedule"
    starts_apart = True

    def channel(self, event: TriggerEvent, chat: Chat, run_id: str) -> Channel:
        target = dict(event.reply_to)
        # its working message in a Slack channel has a Stop, as any run's
        found = chat.thread(target, event.thread_id, run_id, team=None, user=None) if "channel" in target else None
        if found is None and "issue_key" in target:
            found = chat.issue(target["issue_key"])
        return found if found is not None else chat.nowhere(event.source)

    def requester(self, event: TriggerEvent) -> Requester:
        """The schedule itself, by name (access.groups' ``schedules``)."""
        name = str(event.attributes.get("schedule") or "")
        return Requester(f"schedule:{name}", name, (("schedules", name),))

    def acts_for(self, event: TriggerEvent, workflow: Workflow) -> tuple[str | None, str]:
        """The schedule's named ``owner``; a schedule without one acts for nobody."""
        name = str(event.attributes.get("schedule") or "")
        found = next((s for s in workflow.triggers.schedules if s.name == name), None)
        if found is None or not found.owner:
            return None, f"the schedule {name!r} names no owner (add owner: slack:<user id> to it)"
        return found.owner, ""
