"""What a workflow's triggers need from the machine beyond its file: the Slack and JIRA credentials its events and
answers use, its webhook's secret, where its schedules answer; and what connecting its people to OAuth providers
needs. ``workflows validate`` says each one missing as a warning: a local ``run`` goes on without any of them (they
matter to ``serve`` and to the stack), so they never fail validation. The built-in tools' credentials are the
toolsets' to say (they leave a tool out of a run)."""

from __future__ import annotations

from collections.abc import Callable

from .oauth import STATE_KEY
from .schema import Workflow

Secret = Callable[[str], str | None]  # a key of the integrations secret → its value (locally: the env variable)


def missing_credentials(
    workflow: Workflow, secret: Secret, *, jira_site: bool, api_url: str | None = None, stack: bool = False
) -> list[tuple[str, str]]:
    """(key, why) for each credential the workflow's triggers (and its people's connections) would use and this
    machine lacks. ``jira_site``: JIRA_BASE_URL and JIRA_EMAIL are set (the account answers are posted as);
    ``api_url``: AGENT_API_URL; ``stack``: the secrets are a stack's (AGENT_SECRETS_NAME)."""
    triggers, found = workflow.triggers, _connecting(workflow, secret, api_url, stack)
    playground = "" if secret("slack_bot_token") else _PLAYGROUND
    if triggers.slack is not None:
        lacking = _unset(secret, "slack_signing_secret", "slack_bot_token")
        if lacking:
            found.append(("triggers.slack", f"{lacking}: {_slack_without(secret)}{playground}"))
    if triggers.jira is not None:
        if not (secret("jira_webhook_secret") or secret("jira_shared_secret")):
            found.append(
                (
                    "triggers.jira",
                    f"{_named('jira_webhook_secret')} (or {_named('jira_shared_secret')}) "
                    f"is not set: serve refuses a JIRA site's webhooks for it{playground}",
                )
            )
        if not _jira(secret, jira_site):
            found.append(
                ("triggers.jira", f"{_JIRA_ANSWERS}: its answers cannot be commented on a JIRA site{playground}")
            )
    if triggers.webhook is not None and not secret(triggers.webhook.secret):
        refused = f"every POST /hooks/{workflow.name} is refused until it is"
        if triggers.webhook.signature == "notion":
            refused += f" (Notion's verification token: agent-runtime workflows webhook-token {workflow.name})"
        found.append(("triggers.webhook.secret", f"{_named(triggers.webhook.secret)} is not set: {refused}"))
    for schedule in triggers.schedules:
        kind = schedule.answer_to.partition(":")[0]
        where = f"triggers.schedule {schedule.name!r}: answer_to {schedule.answer_to}"
        if kind == "slack" and not secret("slack_bot_token"):
            found.append((where, f"{_named('slack_bot_token')} is not set: the answer stays in the run record"))
        elif kind == "jira" and not _jira(secret, jira_site):
            found.append((where, f"{_JIRA_ANSWERS}: the answer stays in the run record"))
    return found


def _connecting(workflow: Workflow, secret: Secret, api_url: str | None, stack: bool) -> list[tuple[str, str]]:
    """What connecting a person to the workflow's OAuth providers needs here: each client secret; the stack's
    address for `agent-runtime run` (serve is its own); a stack's ``oauth_state_key`` (serve makes its own)."""
    if not workflow.oauth:
        return []
    found = [
        (f"oauth.providers.{name}.client_secret", f"{_named(key)} is not set: the provider refuses every connection")
        for name, provider in workflow.oauth.providers.items()
        if (key := provider.secret_name) and not secret(key)
    ]
    if not api_url:
        found.append(("oauth", f"AGENT_API_URL is not set: `agent-runtime run` cannot ask you to connect ({_LOCAL})"))
    if stack and not secret(STATE_KEY):
        found.append(("oauth", f"the integrations secret has no {STATE_KEY}: the stack refuses every connect link"))
    return found


_LOCAL = "start `agent-runtime serve` and set it to serve's address; serve's own runs need nothing: docs/workflows.md"
# Without SLACK_BOT_TOKEN, serve serves the playground: it stands in for Slack and JIRA with secrets of its own.
_PLAYGROUND = "; serve's playground (no SLACK_BOT_TOKEN) stands in for them meanwhile: docs/playground.md"
_JIRA_ANSWERS = "JIRA_BASE_URL, JIRA_EMAIL and JIRA_API_TOKEN are not all set (the account JIRA answers come from)"


def _slack_without(secret: Secret) -> str:
    """What serve does with a Slack workspace's events for the workflow, its credentials lacking."""
    if not secret("slack_signing_secret"):
        return "a Slack workspace's events for it are refused"
    return "its answers go nowhere (a signed Slack event is taken and run; the answer stays in the run's record)"


def _jira(secret: Secret, jira_site: bool) -> bool:
    return jira_site and bool(secret("jira_api_token"))


def _unset(secret: Secret, *keys: str) -> str:
    """The keys without a value, named as a person sets them: '' when every one is set."""
    lacking = [_named(key) for key in keys if not secret(key)]
    if not lacking:
        return ""
    return f"{' and '.join(lacking)} {'is' if len(lacking) == 1 else 'are'} not set"


def _named(key: str) -> str:
    """A secret's key as it is set locally: the upper-case environment variable (in AWS: the integrations secret's
    key of that name in lower case)."""
    return key.upper()
