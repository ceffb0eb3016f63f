"""Build the webhook app and the worker from the environment: AWS (table, bucket, queue set) or local.

Clients are made here, at cold start, never at import time; tests and ``serve`` pass their own pieces.
"""

from __future__ import annotations

import functools
import json
import os
from typing import Any

from aws_lambda_powertools import Logger, Metrics

from ..config import RuntimeConfig
from ..runtime import open_model
from ..sandbox import sandbox_for
from ..stores import Store
from .channels import Replies
from .config import SECRETS_MAX_AGE, TriggerConfig, store_for
from .queue import SqsQueue
from .replies import JiraReplier, SlackReplier
from .worker import Worker


def worker_from_env(logger: Logger, metrics: Metrics) -> tuple[Worker, Store]:
    import boto3

    triggers = TriggerConfig.from_env()
    openai_key = triggers.secret("openai_api_key") or _openai_secret(os.environ.get("AGENT_OPENAI_SECRET_NAME"))
    if openai_key and not os.environ.get("OPENAI_API_KEY"):
        os.environ["OPENAI_API_KEY"] = openai_key  # read by the openai client; never logged
    runtime = RuntimeConfig.from_env()
    session = boto3.session.Session()  # one session: its clients share the parsed endpoint data (~60 ms each)
    store = store_for(triggers, runtime, session)
    queue = SqsQueue(session.client("sqs"), triggers.queue_url, store=store) if triggers.queue_url else None
    worker = Worker(
        runtime,
        store=store,
        queue=queue,
        models=lambda workflow: open_model(workflow, runtime, client=shared_client()),
        replies=replies_for(triggers),
        sandbox=sandbox_for(runtime),
        logger=logger,
        metrics=metrics,
        max_attachment_bytes=triggers.max_attachment_bytes,
        secrets=triggers.secret,
    )
    return worker, store


def _openai_secret(name: str | None) -> str | None:
    """AGENT_OPENAI_SECRET_NAME: a secret holding the key itself, or JSON with ``openai_api_key``."""
    if not name:
        return None
    from aws_lambda_powertools.utilities import parameters

    value = str(parameters.get_secret(name, max_age=SECRETS_MAX_AGE) or "").strip()
    if value.startswith("{"):
        return str(json.loads(value).get("openai_api_key") or "") or None
    return value or None


@functools.cache
def shared_client() -> Any:
    """One ``openai`` client per process (warm invocations reuse its connections)."""
    import openai

    return openai.OpenAI(api_key=os.environ.get("OPENAI_API_KEY") or "not-needed", max_retries=0)


def replies_for(triggers: TriggerConfig) -> Replies:
    slack_token, jira_token = triggers.secret("slack_bot_token"), triggers.secret("jira_api_token")
    return Replies(
        slack=SlackReplier(slack_token, base_url=triggers.slack_api_url) if slack_token else None,
        jira=JiraReplier(triggers.jira_base_url, triggers.jira_email, jira_token)
        if triggers.jira_base_url and triggers.jira_email and jira_token
        else None,
    )
