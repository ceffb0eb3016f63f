"""Build the webhook app and the worker from the environment: AWS (table, bucket, queue set) or local.

Clients are made here, at cold start, never at import time; tests and ``serve`` pass their own pieces.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger, Metrics

from .. import snapstart
from ..chat.channels import Replies
from ..chat.replies import JiraReplier, SlackReplier
from ..config import RuntimeConfig, check_base_url
from ..errors import AgentRuntimeError
from ..sandbox import sandbox_for
from ..sources import BUILTIN
from ..stores import Store
from ..stores.opening import open_store
from ..toolsets import ToolEnv, close_sessions, declared_tools
from ..triggers.config import SECRETS_MAX_AGE, TriggerConfig
from ..triggers.queue import SqsQueue
from ..workflows import available_workflows, load_workflow
from .connections import flow_from_env
from .wakeups import NoWakeups, SchedulerWakeups
from .worker import Process, Worker

if TYPE_CHECKING:
    from ..models import Model
    from ..workflows import Workflow


def worker_from_env(logger: Logger, metrics: Metrics) -> tuple[Worker, Store]:
    """The worker function's pieces. Under SnapStart, secrets are not fetched into the snapshot: each restored
    environment fetches its own (see ``snapstart``), after the snapshot was primed with everything else."""
    import boto3

    snapstart.install()
    triggers, runtime = TriggerConfig.from_env(), RuntimeConfig.from_env()
    # The shared client below reads OPENAI_BASE_URL as it is: one without its scheme is refused here, at init (the
    # function's log says it once), not found out as every message's failed model call.
    check_base_url(os.environ)
    session = boto3.session.Session()  # one session: its clients share the parsed endpoint data (~60 ms each)
    store = open_store(table=triggers.table, bucket=triggers.bucket, state_dir=runtime.state_dir, session=session)
    queue = SqsQueue(session.client("sqs"), triggers.queue_url, store=store) if triggers.queue_url else None
    process = Process(
        runtime,
        store=store,
        queue=queue,
        models=functools.partial(_open_model, runtime),
        replies=Replies(),  # the tokens' clients once secrets load (load_secrets)
        sandbox=sandbox_for(runtime),
        log=logger,
        metrics=metrics,
        max_attachment_bytes=triggers.max_attachment_bytes,
        secrets=triggers.secret,
        wakeups=wakeups_for(triggers, session) or NoWakeups(),
        sources=BUILTIN,  # the webhook function's too (webhook_from_env)
        connect=flow_from_env(store, runtime, triggers.secret, lambda: session.client("kms")),
    )
    worker = Worker(process)
    load = functools.partial(load_secrets, worker, triggers, keep_key=bool(os.environ.get("OPENAI_API_KEY")))
    if snapstart.snapshotting():
        snapstart.before_snapshot(functools.partial(prime_worker, worker))
        snapstart.after_restore(functools.partial(restore_worker, worker, load))
    else:
        load()
    return worker, store


def _open_model(runtime: RuntimeConfig, workflow: Workflow) -> AbstractContextManager[Model]:
    from ..runtime import open_model  # the agent's machinery: at the first run, or primed before the snapshot

    return open_model(workflow, runtime, client=shared_client())


def wakeups_for(triggers: TriggerConfig, session: Any) -> SchedulerWakeups | None:
    """EventBridge Scheduler wake-ups when the stack sets them up (template.yaml); else expiry is lazy."""
    if not (triggers.queue_arn and triggers.scheduler_role_arn):
        return None
    client = session.client("scheduler")
    return SchedulerWakeups(client, triggers.queue_arn, triggers.scheduler_role_arn, triggers.schedule_group)


def load_secrets(worker: Worker, triggers: TriggerConfig, *, keep_key: bool = False) -> None:
    """The OpenAI key (for the ``openai`` client, unless the environment sets one) and the replies' tokens."""
    openai_key = triggers.secret("openai_api_key") or _openai_secret(os.environ.get("AGENT_OPENAI_SECRET_NAME"))
    if openai_key and not keep_key:
        os.environ["OPENAI_API_KEY"] = openai_key  # read by the openai client; never logged
    worker.process.replies = replies_for(triggers)
    shared_client.cache_clear()  # a client holds the key it was made with


def prime_worker(worker: Worker) -> None:
    """Before the snapshot: what the first run would otherwise pay for (~0.3 s here: the ``openai`` client's
    modules, the encodings' BPE tables, the workflows, their Python tools and local OpenAPI documents). Nothing
    here opens a connection or reads a secret; a workflow that cannot be primed is left to fail at its run, as it
    would without SnapStart, rather than failing the version's publication. The agent's machinery (``runtime``:
    the model client, the context engine, the tools), which the worker's init leaves to the first run, is loaded
    here too."""
    from .. import runtime  # noqa: F401 (loaded for the first run after a restore)
    from ..context.encodings import encoding_for_model

    shared_client().chat.completions  # noqa: B018 (the attribute loads the resource's modules)
    env = ToolEnv.from_env(secrets=lambda name: "not-read-before-the-snapshot")
    for name in available_workflows(worker.process.config.workflows_dir):
        try:
            workflow = load_workflow(
                name, worker.process.config.workflows_dir, skill_names=worker.process.skills.names()
            )
            encoding_for_model(workflow.model.name).encode("primed")
            declared_tools(workflow, env, offline=True)
        except AgentRuntimeError as error:
            worker.process.log.warning("workflow not primed", extra={"workflow": name, "reason": str(error)})


def restore_worker(worker: Worker, load_secrets: Callable[[], None]) -> None:
    """After each restore: fresh connections and this environment's own secrets and clients."""
    process = worker.process
    store, queue = process.store, process.queue
    snapstart.close_connections(getattr(store, "s3", None), getattr(store, "dynamodb", None))
    snapstart.close_connections(getattr(queue, "sqs", None), getattr(process.wakeups, "client", None))
    if process.sandbox is not None:
        process.sandbox.close()
    close_sessions()  # MCP sessions: their sockets did not survive the snapshot
    load_secrets()
    shared_client()  # made now (restore hooks count towards the cold start either way), with the fresh key


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
