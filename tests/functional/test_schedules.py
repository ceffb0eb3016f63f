"""Schedules in the world: a deploy keeps EventBridge Scheduler's schedules exactly the workflows' (moto's
Scheduler in server mode: created, changed, removed with the workflow file, all gone with the stack, a broken
workflow failing the deploy with its reason); a tick Scheduler delivers twice is one run, its answer a message of
its own in the schedule's Slack channel (through SQS and the worker against the fake Slack API)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_runtime.stores import RunStore
from agent_runtime.testing import reply
from agent_runtime.triggers.queued import TickMessage
from agent_runtime.triggers.schedules import on_deploy

from tests.conftest import moto_clients

DIGEST = """\
name: daily-digest
description: Posts the day's digest.
prompt: You write digests.
model: {{name: gpt-4o, context_window: 128000, max_output_tokens: 1024}}
triggers:
  schedule: {{name: weekdays, expression: '{expression}', timezone: Europe/Paris,
             message: Write the digest of yesterday's tickets., answer_to: 'slack:C0DIGEST'}}
"""


def listed(client: Any, group: str) -> dict[str, dict[str, Any]]:
    names = [s["Name"] for s in client.list_schedules(GroupName=group)["Schedules"]]
    return {name: client.get_schedule(GroupName=group, Name=name) for name in names}


def test_a_deploy_keeps_the_schedules_exactly_the_workflows(moto_endpoint: str, tmp_path: Path) -> None:
    client = moto_clients(moto_endpoint, "scheduler")["scheduler"]
    group = f"wf{abs(hash(str(tmp_path))) % 10**8}"
    client.create_schedule_group(Name=group)
    env = {"AGENT_WORKFLOWS_DIR": str(tmp_path), "AGENT_WORKFLOW_SCHEDULE_GROUP": group,
           "AGENT_QUEUE_ARN": "arn:aws:sqs:us-east-1:123456789012:runs.fifo",
           "AGENT_SCHEDULER_ROLE_ARN": "arn:aws:iam::123456789012:role/ticks"}  # fmt: skip
    flow = tmp_path / "daily-digest.yaml"
    flow.write_text(DIGEST.format(expression="cron(0 9 ? * MON-FRI *)"))
    assert on_deploy("Create", client, env) == ("SUCCESS", {"created": 1, "updated": 0, "deleted": 0, "kept": 0}, "")
    [(name, made)] = listed(client, group).items()
    assert name == "wf-daily-digest--weekdays"
    assert (
        made["ScheduleExpression"] == "cron(0 9 ? * MON-FRI *)" and made["ScheduleExpressionTimezone"] == "Europe/Paris"
    )
    sent = json.loads(made["Target"]["Input"])
    assert sent == {"type": "tick", "workflow": "daily-digest", "schedule": "weekdays",
                    "at": "<aws.scheduler.scheduled-time>"}  # fmt: skip
    assert on_deploy("Update", client, env)[1]["kept"] == 1  # nothing changed: nothing touched

    flow.write_text(DIGEST.format(expression="cron(30 8 ? * MON-FRI *)"))
    assert on_deploy("Update", client, env)[1]["updated"] == 1
    assert listed(client, group)[name]["ScheduleExpression"] == "cron(30 8 ? * MON-FRI *)"

    flow.write_text(DIGEST.format(expression="cron(0 9 ? * MON-FRI").replace("weekdays", "mornings"))
    status, _, why = on_deploy("Update", client, env)  # a broken workflow fails the deploy, saying why
    assert status == "FAILED" and "daily-digest" in why and "expression" in why
    assert set(listed(client, group)) == {name}  # and changes nothing

    flow.write_text(DIGEST.format(expression="rate(1 day)").replace("weekdays", "mornings"))
    counts = on_deploy("Update", client, env)[1]
    assert (counts["created"], counts["deleted"]) == (1, 1) and set(listed(client, group)) == {
        "wf-daily-digest--mornings"
    }
    flow.unlink()
    assert on_deploy("Update", client, env)[1]["deleted"] == 1 and listed(client, group) == {}
    flow.write_text(DIGEST.format(expression="rate(1 day)"))
    on_deploy("Update", client, env)
    assert on_deploy("Delete", client, env)[0] == "SUCCESS" and listed(client, group) == {}  # gone with the stack


def test_a_tick_delivered_twice_is_one_run_answered_in_its_channel(system, scripted, tmp_path: Path) -> None:
    (tmp_path / "daily-digest.yaml").write_text(DIGEST.format(expression="cron(0 9 ? * MON-FRI *)"))
    server = scripted(reply("Yesterday: 3 tickets closed, 1 opened."))
    s = system(server)
    tick = TickMessage("daily-digest", "weekdays", "2026-11-27T08:00:00Z").body()
    for attempt in ("a", "b"):  # Scheduler retried a send it thought had failed
        group = "wf-daily-digest--weekdays"
        s.clients["sqs"].send_message(QueueUrl=s.queue_url, MessageBody=json.dumps(tick), MessageGroupId=group,
                                      MessageDeduplicationId=attempt)  # fmt: skip
    assert sorted(s.deliver()) == ["answered", "duplicate"]
    [request] = server.requests
    assert request.last_user_text().startswith("Write the digest of yesterday's tickets.")
    posts = s.apis.named("chat.postMessage")
    assert {p["channel"] for p in posts} == {"C0DIGEST"} and not any(p.get("thread_ts") for p in posts)
    assert any("3 tickets closed" in str(u.get("text")) for u in s.apis.named("chat.update"))
    [summary] = RunStore(s.store).list_runs(limit=5)
    assert summary.status == "completed"
    gone = TickMessage("daily-digest", "hourly", "2026-11-27T09:00:00Z").body()  # a schedule the workflow dropped
    s.clients["sqs"].send_message(QueueUrl=s.queue_url, MessageBody=json.dumps(gone), MessageGroupId="g",
                                  MessageDeduplicationId="c")  # fmt: skip
    assert s.deliver() == ["ignored"] and len(server.requests) == 1


def test_a_scheduled_runs_working_message_has_a_stop_its_approvers_can_press(system, scripted, tmp_path: Path) -> None:
    """Was: a scheduled run's working message had no Stop button (its channel got an empty thread id). Nobody
    asked for a scheduled run: the workflow's approvers may stop it; anyone else is told so."""
    from agent_runtime.testing import Paced

    from tests.approvals_support import click
    from tests.slack_support import stop_value

    flow = DIGEST.format(expression="cron(0 9 ? * MON-FRI *)") + "tools: {approvers: [U0LEAD]}\n"
    (tmp_path / "daily-digest.yaml").write_text(flow)
    seen: dict[str, Any] = {}

    def stop_while_writing(request: Any) -> Paced:
        value = stop_value(s)
        seen["value"] = value
        seen["clicks"] = [click(s, value, user, action="run_stop")["statusCode"] for user in ("U0DANA", "U0LEAD")]
        seen["outcomes"] = s.deliver()  # the clicks, in a group of their own while the run holds its own
        return Paced(reply("Yesterday: " + "a ticket closed. " * 400), interval=0.05)

    s = system(scripted(stop_while_writing))
    tick = TickMessage("daily-digest", "weekdays", "2026-11-27T08:00:00Z").body()
    s.clients["sqs"].send_message(QueueUrl=s.queue_url, MessageBody=json.dumps(tick), MessageGroupId="wf-g",
                                  MessageDeduplicationId="t1")  # fmt: skip
    assert s.deliver() == ["stopped"]  # and no continuation beside it (the tick's group is not its thread's)
    [summary] = RunStore(s.store).list_runs(limit=5)
    event = RunStore(s.store).load_event(summary.run_id)
    assert event is not None and seen["value"] == f"{summary.run_id}|{event.thread_id}"
    assert seen["clicks"] == [200, 200] and sorted(seen["outcomes"]) == ["refused", "stopped"]
    assert summary.status == "stopped"
    told = s.apis.named("chat.postEphemeral")
    assert [t["user"] for t in told] == ["U0DANA"]  # the one who may not stop it is told so, privately
