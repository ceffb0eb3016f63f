"""Schedules function: a CloudFormation custom resource that keeps EventBridge Scheduler's schedules in step with
the workflows in the content layer — on every deploy that changes them (the layer's version is the resource's
property), and away with the stack. A workflow that fails to load fails the deploy, with its reason."""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

import boto3
from agent_runtime.triggers.schedules import on_deploy
from aws_lambda_powertools import Logger

logger = Logger(service="agent-runtime-schedules")


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: Any) -> None:
    status, data, reason = on_deploy(event["RequestType"], boto3.client("scheduler"), os.environ)
    logger.info("schedules synced" if status == "SUCCESS" else "schedules not synced", extra={"why": reason, **data})
    ids = {key: event[key] for key in ("StackId", "RequestId", "LogicalResourceId")}
    answer = {"Status": status, "Reason": reason or "ok", "PhysicalResourceId": "workflow-schedules", **ids,
              "Data": data}  # fmt: skip
    request = urllib.request.Request(event["ResponseURL"], data=json.dumps(answer).encode(), method="PUT",
                                     headers={"Content-Type": ""})  # fmt: skip
    with urllib.request.urlopen(request, timeout=30) as response:
        response.read()
