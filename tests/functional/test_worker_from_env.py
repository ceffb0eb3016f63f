"""The worker built the way its Lambda function builds it (``worker_from_env``: clients from the environment, the
integrations secret read after construction), against moto and the fake Slack API. Was: the pane captured the
constructor's Slack client (none, before secrets load), so in the deployed worker the pane's suggested prompts were
never sent, while the tests, which built the worker with its final clients, passed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from agent_runtime.deadline import Deadline
from agent_runtime.inbound import PaneEvent
from agent_runtime.service.setup import worker_from_env
from agent_runtime.triggers.queued import PaneMessage
from aws_lambda_powertools import Logger, Metrics

from tests.conftest import create_stack, moto_clients
from tests.slack_support import DESK
from tests.triggers_support import fake_apis


def test_the_lambda_built_worker_sends_the_panes_prompts_with_the_token_its_secret_holds(
    moto_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clients = moto_clients(moto_endpoint, "dynamodb", "s3", "sqs", "secretsmanager")
    queue = create_stack(clients, "fromenv")
    secret = json.dumps({"slack_bot_token": "xoxb-test"})  # the only token the fake Slack API accepts
    clients["secretsmanager"].create_secret(Name="fromenv/integrations", SecretString=secret)
    (tmp_path / "assistant-desk.yaml").write_text(DESK)
    with fake_apis() as (apis, base):
        aws = {"AWS_ENDPOINT_URL": moto_endpoint, "AWS_DEFAULT_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "t"}
        stack = {"AGENT_TABLE": "fromenv", "AGENT_BUCKET": "fromenv", "AGENT_QUEUE_URL": queue}
        local = {"AGENT_SECRETS_NAME": "fromenv/integrations", "SLACK_API_URL": f"{base}/"}
        for name, value in {**aws, **stack, **local, "AWS_SECRET_ACCESS_KEY": "t"}.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv("AGENT_WORKFLOWS_DIR", str(tmp_path))
        monkeypatch.delenv("SLACK_BOT_TOKEN", raising=False)
        worker, _ = worker_from_env(Logger(service="test"), Metrics(namespace="AgentRuntimeTest", service="w"))
        opened = PaneEvent("opened", "Ev1", "T0TEAM", "D0APP", "U0DANA", thread_ts="1726133698.626339")
        body: dict[str, Any] = PaneMessage(opened, "assistant-desk").body()
        assert worker.handle(body, deadline=Deadline.after(60)) == "noted"
        [offered] = apis.named("assistant.threads.setSuggestedPrompts")
    assert (offered["channel_id"], offered["thread_ts"]) == ("D0APP", "1726133698.626339")
    assert [p["title"] for p in offered["prompts"]] == ["Summarise the open incidents", "Review a design"]
