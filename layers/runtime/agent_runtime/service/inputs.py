"""What a run starts from and what it leaves in the metrics: the message the model reads (what was said earlier
in a thread the bot joins, the person's words, attachments downloaded into the thread's files or a note of why
not, the channel the person has open beside the pane), and the worker's counts of each run."""

from __future__ import annotations

import base64
from collections.abc import Callable

from aws_lambda_powertools import Metrics
from aws_lambda_powertools.metrics import MetricUnit

from ..chat.channels import Channel
from ..chat.exceptions import ReplyError
from ..errors import AgentRuntimeError
from ..events import Compaction
from ..record import RunRecord, RunStatus
from ..sources import Chat, Sources
from ..stores import StoreFileStore
from ..triggers.event import TriggerEvent
from ..triggers.queued import EventMessage, TickMessage
from ..triggers.schedules import tick_event
from ..workflows import Workflow, WorkflowError


def message_for(event: TriggerEvent, channel: Channel, files: StoreFileStore, limit: int, *, first: bool) -> str:
    earlier = channel.earlier(event) if first else ""
    lead = f"[earlier in this thread]\n{earlier}\n[the message to answer]\n" if earlier else ""
    notes = []
    for attachment in event.attachments:
        try:
            data = (
                _inline(attachment.url, limit)
                if attachment.url.startswith("data:")
                else channel.download(attachment.url, limit)
            )
            files.put(data, name=attachment.name, mimetype=attachment.mimetype)
        except (ReplyError, AgentRuntimeError) as error:
            notes.append(f"[attachment {attachment.name} could not be added: {error}]")
    if event.attributes.get("viewing"):  # an id Slack gave (checked when it came in), never free text
        notes.append(f"[in Slack, the person has channel <#{event.attributes['viewing']}> open beside this chat]")
    return lead + "\n".join([event.text or "(no text)", *notes])


def resolved(event: TriggerEvent, sources: Sources, chat: Chat) -> TriggerEvent:
    """The event as its source prepares the run's message (a reaction's: the message it was added to, read now:
    the webhook answers Slack within 3 s). Raises ReplyError when what it needs cannot be read."""
    return sources.of(event).prepare(event, chat)


def ticked(tick: TickMessage, named: Callable[[str], Workflow]) -> EventMessage | None:
    """A schedule's tick as the event of the run it starts; None when its workflow or schedule is gone."""
    try:
        event = tick_event(named(tick.workflow), tick)
    except WorkflowError:
        return None
    return None if event is None else EventMessage(event)


def _inline(url: str, limit: int) -> bytes:
    """A file the event carries itself (a signed webhook's body): ``data:<type>;base64,<data>``."""
    try:
        data = base64.b64decode(url.split(",", 1)[1], validate=True)
    except (IndexError, ValueError):
        raise AgentRuntimeError("not a base64 data URL") from None
    if len(data) > limit:
        raise AgentRuntimeError(f"larger than {limit // 2**20} MB")
    return data


def measure(metrics: Metrics | None, record: RunRecord) -> None:
    if metrics is None:
        return
    usage = record.usage_totals()
    metrics.add_metric("Runs", MetricUnit.Count, 1)
    metrics.add_metric("Tokens", MetricUnit.Count, usage["total_tokens"])
    metrics.add_metric("ToolCalls", MetricUnit.Count, len(record.tool_calls))
    compactions = len(record.events_of(Compaction))
    metrics.add_metric("Compactions", MetricUnit.Count, compactions)
    if record.status is RunStatus.FAILED:
        metrics.add_metric("RunFailures", MetricUnit.Count, 1)
