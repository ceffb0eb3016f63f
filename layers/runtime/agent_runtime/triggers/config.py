"""Trigger settings from the environment, and secrets: Secrets Manager (Powertools parameters, cached) in AWS,
plain environment variables locally.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import RuntimeConfig
    from ..workflows import Workflow

SECRET_KEYS = (
    "slack_signing_secret",
    "slack_bot_token",
    "jira_webhook_secret",
    "jira_shared_secret",
    "jira_api_token",
    "api_key",
    "openai_api_key",
)
SECRETS_MAX_AGE = 300  # seconds: a rotated secret is picked up within five minutes


@dataclass(frozen=True, slots=True)
class TriggerConfig:
    """Where things are. Built once per cold start; secrets are fetched on first use."""

    table: str | None = None  # AGENT_TABLE: DynamoDB table (with AGENT_BUCKET: the AWS store)
    bucket: str | None = None
    queue_url: str | None = None  # AGENT_QUEUE_URL
    secrets_name: str | None = None  # AGENT_SECRETS_NAME: one Secrets Manager secret (JSON) with SECRET_KEYS
    slack_api_url: str = "https://slack.com/api/"
    slack_bot_user_id: str | None = None
    jira_base_url: str | None = None  # https://your-site.atlassian.net
    jira_email: str | None = None
    jira_bot_account_id: str | None = None
    max_attachment_bytes: int = 20 * 1024 * 1024
    # Wake-ups of runs that wait for approval (EventBridge Scheduler → the queue): all three, or none.
    queue_arn: str | None = None  # AGENT_QUEUE_ARN
    scheduler_role_arn: str | None = None  # AGENT_SCHEDULER_ROLE_ARN: the role Scheduler sends with
    schedule_group: str = "default"  # AGENT_SCHEDULE_GROUP
    env: Mapping[str, str] = field(default_factory=dict, repr=False)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> TriggerConfig:
        env = dict(os.environ if env is None else env)
        return cls(
            table=env.get("AGENT_TABLE") or None,
            bucket=env.get("AGENT_BUCKET") or None,
            queue_url=env.get("AGENT_QUEUE_URL") or None,
            secrets_name=env.get("AGENT_SECRETS_NAME") or None,
            slack_api_url=env.get("SLACK_API_URL") or "https://slack.com/api/",
            slack_bot_user_id=env.get("SLACK_BOT_USER_ID") or None,
            jira_base_url=(env.get("JIRA_BASE_URL") or "").rstrip("/") or None,
            jira_email=env.get("JIRA_EMAIL") or None,
            jira_bot_account_id=env.get("JIRA_BOT_ACCOUNT_ID") or None,
            max_attachment_bytes=int(env.get("AGENT_MAX_ATTACHMENT_MB") or 20) * 1024 * 1024,
            queue_arn=env.get("AGENT_QUEUE_ARN") or None,
            scheduler_role_arn=env.get("AGENT_SCHEDULER_ROLE_ARN") or None,
            schedule_group=env.get("AGENT_SCHEDULE_GROUP") or "default",
            env=env,
        )

    def secret(self, key: str) -> str | None:
        """``slack_signing_secret`` etc.: from the Secrets Manager secret, else the upper-case env variable."""
        if self.secrets_name:
            return _from_secrets_manager(self.secrets_name).get(key) or None
        return self.env.get(key.upper()) or None

    def secret_values(self, names: Iterable[str] = ()) -> list[str]:
        """Every value a page must never show: the whole integrations secret in AWS (each of its keys), locally the
        known keys and ``names`` (the workflows' ``${secret:NAME}`` and webhook secrets)."""
        if self.secrets_name:
            return [str(v) for v in _from_secrets_manager(self.secrets_name).values() if isinstance(v, str) and v]
        return [v for key in {*SECRET_KEYS, "run_page_key", *names} if (v := self.env.get(key.upper()))]


def _from_secrets_manager(name: str) -> dict[str, Any]:
    from aws_lambda_powertools.utilities import parameters

    value = parameters.get_secret(name, transform="json", max_age=SECRETS_MAX_AGE)
    return value if isinstance(value, dict) else {}


def all_workflows(runtime: RuntimeConfig) -> list[Workflow]:
    from ..workflows import available_workflows, load_workflow

    return [load_workflow(name, runtime.workflows_dir) for name in available_workflows(runtime.workflows_dir)]


class WorkflowsWhenUsed(Sequence["Workflow"]):
    """The workflows, loaded (YAML parsed, every section validated) when a request first needs them: the webhook's
    init without the YAML parser and the schema. Under SnapStart the webhook reads them before the snapshot
    (``snapstart.before_snapshot``), so a restored environment has them loaded, as the worker primes its run."""

    def __init__(self, runtime: RuntimeConfig) -> None:
        self.runtime = runtime
        self._loaded: list[Workflow] | None = None

    def _all(self) -> list[Workflow]:
        if self._loaded is None:
            self._loaded = all_workflows(self.runtime)
        return self._loaded

    def __getitem__(self, index: Any) -> Any:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())
