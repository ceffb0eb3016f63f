"""Workflows' schedules in the world: the queue message a tick becomes, the run it starts, the EventBridge
Scheduler schedules a deploy keeps in step with the workflow files, and the ticks ``serve`` fires locally.

On AWS, a custom resource (``functions/schedules``) calls ``sync`` on every deploy that changes the workflows
(their layer's version is its property): it creates, updates and deletes the schedules of its group so they are
exactly the workflows' ``triggers.schedule``, each sending a ``TickMessage`` with Scheduler's own scheduled time to
the run queue. A tick delivered twice is one run (the run's id comes from the workflow, the schedule and that
time); Scheduler retries a failed send for an hour at most, so a missed tick is never run twice later."""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..inbound import TriggerEvent
from .queued import TickMessage

if TYPE_CHECKING:
    from ..workflows import Workflow

log = logging.getLogger(__name__)
PREFIX = "wf-"  # the schedules sync owns in its group
SCHEDULED_TIME = "<aws.scheduler.scheduled-time>"  # Scheduler puts the tick's time in the message
MAX_EVENT_AGE_SECONDS = 3_600  # a tick Scheduler could not send within an hour is dropped, not sent late


def schedule_name(workflow: str, schedule: str) -> str:
    """At most 64 characters, stable, and readable where it fits."""
    name = f"{PREFIX}{workflow}--{schedule}"
    return name if len(name) <= 64 else f"{name[:47]}-{hashlib.sha256(name.encode()).hexdigest()[:16]}"


def tick_event(workflow: Workflow, tick: TickMessage) -> TriggerEvent | None:
    """The run a tick starts; None when the workflow no longer has that schedule (a tick sent before a deploy)."""
    schedule = next((s for s in workflow.triggers.schedules if s.name == tick.schedule), None)
    if schedule is None:
        return None
    kind, _, where = schedule.answer_to.partition(":")
    reply_to = {"channel": where, "thread_ts": ""} if kind == "slack" else {"issue_key": where} if where else {}
    key = f"schedule:{workflow.name}:{schedule.name}:{tick.at}"
    return TriggerEvent(
        source="schedule",
        kind="tick",
        dedup_key=key,
        text=schedule.message,
        user=f"schedule:{schedule.name}",
        thread_id=f"schedule-{workflow.name}-{hashlib.sha256(key.encode()).hexdigest()[:16]}",
        correlation_id=f"{schedule.name}@{tick.at}",
        reply_to=reply_to,
        attributes={"schedule": schedule.name, "at": tick.at, "answer_to": kind},
        workflow=workflow.name,
    )


def desired(workflows: Sequence[Workflow], *, queue_arn: str, role_arn: str) -> dict[str, dict[str, Any]]:
    """Every workflow's schedules as CreateSchedule arguments (without the group), by schedule name."""
    wanted = {}
    for workflow in workflows:
        for schedule in workflow.triggers.schedules:
            name = schedule_name(workflow.name, schedule.name)
            body = TickMessage(workflow.name, schedule.name, SCHEDULED_TIME).body()
            wanted[name] = {
                "Name": name,
                "ScheduleExpression": schedule.expression,
                "ScheduleExpressionTimezone": schedule.timezone,
                "FlexibleTimeWindow": {"Mode": "OFF"},
                "State": "ENABLED",
                "Description": f"{workflow.name}: {schedule.name} (agent-runtime, kept in step on deploy)",
                "Target": {
                    "Arn": queue_arn,
                    "RoleArn": role_arn,
                    "Input": json.dumps(body),
                    "SqsParameters": {"MessageGroupId": name},
                    "RetryPolicy": {"MaximumEventAgeInSeconds": MAX_EVENT_AGE_SECONDS, "MaximumRetryAttempts": 10},
                },
            }
    return wanted


def sync(client: Any, group: str, wanted: dict[str, dict[str, Any]]) -> dict[str, list[str]]:
    """The group's ``wf-`` schedules made exactly ``wanted``: created, updated where they differ, deleted."""
    existing = set(_names(client, group))
    done: dict[str, list[str]] = {"created": [], "updated": [], "deleted": [], "kept": []}
    for name, spec in sorted(wanted.items()):
        if name not in existing:
            client.create_schedule(GroupName=group, **spec)
            done["created"].append(name)
        elif _differs(client.get_schedule(GroupName=group, Name=name), spec):
            client.update_schedule(GroupName=group, **spec)
            done["updated"].append(name)
        else:
            done["kept"].append(name)
    for name in sorted(existing - set(wanted)):
        client.delete_schedule(GroupName=group, Name=name)
        done["deleted"].append(name)
    return done


def _names(client: Any, group: str) -> Iterator[str]:
    token: str | None = None
    while True:
        page = client.list_schedules(GroupName=group, NamePrefix=PREFIX, **({"NextToken": token} if token else {}))
        yield from (item["Name"] for item in page.get("Schedules", []))
        token = page.get("NextToken")
        if not token:
            return


def _differs(current: dict[str, Any], spec: dict[str, Any]) -> bool:
    keys = ("ScheduleExpression", "ScheduleExpressionTimezone", "State", "Description")
    target = current.get("Target") or {}
    return any(current.get(k) != spec[k] for k in keys) or any(
        target.get(k) != spec["Target"][k] for k in ("Arn", "RoleArn", "Input")
    )


def due(workflows: Sequence[Workflow], after: datetime, until: datetime) -> list[TickMessage]:
    """The ticks of every schedule in (``after``, ``until``]: what ``serve`` fires when its clock reaches
    ``until`` (a tick missed while it was not running is not fired later). A schedule whose next time cannot be
    computed is said in the log and skipped: it never stops the other schedules (validation refuses such a one;
    this is for the one it did not foresee)."""
    ticks = []
    for workflow in workflows:
        for schedule in workflow.triggers.schedules:
            try:
                moment = schedule.next_after(after)
            except Exception as error:  # any: one schedule's fault must not stop every workflow's
                log.error(
                    "schedule %s of workflow %s skipped: %s: %s",
                    schedule.name,
                    workflow.name,
                    type(error).__name__,
                    str(error)[:200],
                )
                continue
            if moment is not None and moment <= until:
                ticks.append(TickMessage(workflow.name, schedule.name, _iso(moment)))
    return ticks


def dedup_id(tick: TickMessage) -> str:
    """A tick's id in the queue: its workflow, schedule and time (two workflows' ``schedule-1`` at the same minute
    are two ticks)."""
    return f"tick:{tick.workflow}:{tick.schedule}@{tick.at}"


def _iso(moment: datetime) -> str:
    """As Scheduler writes its scheduled time: UTC, seconds, a Z."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def on_deploy(request: str, client: Any, env: Mapping[str, str]) -> tuple[str, dict[str, int], str]:
    """The custom resource's work: ``Create``/``Update`` sync to the workflows in ``AGENT_WORKFLOWS_DIR``,
    ``Delete`` removes them all. (status, counts, reason): a failure is said, never raised."""
    from ..config import RuntimeConfig
    from .config import all_workflows

    try:
        workflows = [] if request == "Delete" else all_workflows(RuntimeConfig.from_env(env))
        wanted = desired(workflows, queue_arn=env["AGENT_QUEUE_ARN"], role_arn=env["AGENT_SCHEDULER_ROLE_ARN"])
        done = sync(client, env["AGENT_WORKFLOW_SCHEDULE_GROUP"], wanted)
    except Exception as error:  # a deploy must fail with the reason, not hang until CloudFormation times out
        return "FAILED", {}, f"{type(error).__name__}: {error}"[:1_000]
    return "SUCCESS", {key: len(names) for key, names in done.items()}, ""
