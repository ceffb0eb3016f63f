"""Webhook function: Slack events, JIRA webhooks and /runs → verify, deduplicate, enqueue, answer fast.

It never runs the agent (Slack wants an answer within 3 s); the worker does.
"""

from __future__ import annotations

from typing import Any

from agent_runtime import telemetry
from agent_runtime.service.webhook import webhook_from_env
from aws_lambda_powertools import Logger

logger = Logger(service="agent-runtime-webhook")
webhook = webhook_from_env(logger)


@logger.inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    try:
        return webhook.handle(event, context)
    finally:
        telemetry.flush()  # before Lambda freezes the environment
