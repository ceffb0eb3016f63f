"""The system end to end as the `system` fixture builds it: its workflow, its handle, a step reading design.md."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_runtime.service.worker import Worker
from agent_runtime.stores import Store
from agent_runtime.testing import Reply, ScriptedCall
from aws_lambda_powertools import Metrics

from tests.triggers_support import FakeApis

WORKFLOW = """\
name: design-review
description: Reviews designs.
prompt: You review designs. Answer in Slack mrkdwn.
model: {name: gpt-4o, context_window: 128000, max_output_tokens: 1024}
triggers:
  slack: {channels: [C0REVIEW], direct_messages: true}
  jira: {projects: [PROJ]}
"""


@dataclass
class System:
    post: Callable[..., dict[str, Any]]
    deliver: Callable[..., list[str]]
    apis: FakeApis
    store: Store
    worker: Worker
    redeliver: Callable[[], list[str]]
    base: str  # the fake Slack/JIRA APIs' root URL
    metrics: Metrics
    received: list[dict[str, Any]]  # every SQS message the worker was handed
    clients: dict[str, Any]  # moto's: dynamodb, sqs, s3, scheduler
    queue_url: str
    get: Callable[[str], dict[str, Any]]  # a GET through the webhook's routes (a run page's link)


def read_design(request: Any) -> Reply:
    file_id = re.search(r"(file-[0-9a-f]+): \"design\.md", request.system_text()).group(1)
    return Reply(calls=(ScriptedCall("file_read", {"id": file_id}),))
