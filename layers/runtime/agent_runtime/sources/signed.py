"""A signed webhook from another system (GitHub, Notion, any sender that signs with HMAC): ``POST /hooks/<name>``
for the workflow ``name`` whose ``triggers.webhook`` says how it is signed (``triggers/signed.py``). The route
names the workflow; Notion's unsigned handshake is kept for the admin. Its run answers nowhere: its record and
the runs channel say what it did."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..access import Requester
from ..inbound import Ignored, TriggerEvent
from ..triggers import signed
from ..triggers.config import TriggerConfig
from ..triggers.exceptions import RejectedRequest
from ..triggers.handshakes import Handshakes
from .base import Intake, Request, Source, safe

if TYPE_CHECKING:
    from ..workflows import Workflow


class SignedWebhook(Source):
    answers_caller = True
    name = "webhook"
    route = "/hooks/<name>"

    def parse(self, request: Request) -> Intake:
        """A signed delivery for the workflow named in the route."""
        name = request.params["name"]
        workflow = next((w for w in request.workflows if w.name == name and w.triggers.webhook is not None), None)
        if workflow is None or workflow.triggers.webhook is None:
            raise RejectedRequest(404, "no workflow takes webhooks at this route")
        key = workflow.triggers.webhook.secret
        result = signed.parse(
            request.headers,
            request.body,
            workflow,
            request.config.secret(key),
            request.now,
            unset=_secret_source(request.config, key),
        )
        if not isinstance(result, signed.Handshake):
            return result
        if request.store is None:
            raise RejectedRequest(503, "this server keeps no verification tokens (no store)")
        Handshakes(request.store()).save(name, result.token, request.now)
        request.log.info("verification token kept", extra={"workflow": name})  # never the token itself
        return Ignored(f"Notion's verification token is kept: agent-runtime workflows webhook-token {name}")

    def requester(self, event: TriggerEvent) -> Requester:
        """The delivery's sender (GitHub's login, Notion's author id): access.groups' ``webhook_senders``."""
        return Requester(f"webhook:{event.user}", event.user, (("webhook_senders", event.user),))

    def acts_for(self, event: TriggerEvent, workflow: Workflow) -> tuple[str | None, str]:
        """The person ``triggers.webhook.identities`` maps the sender to; an unmapped sender acts for nobody."""
        rule = workflow.triggers.webhook
        person = rule.identities.get(event.user) if rule is not None else None
        if person is None:
            return None, f"the webhook's sender {event.user!r} is not in triggers.webhook.identities"
        return person, ""

    def described(self, event: TriggerEvent) -> str:
        return f"webhook {safe(str(event.attributes.get('event') or event.kind))}"


def _secret_source(config: TriggerConfig, key: str) -> str:
    """Where a secret is read where this runs: the integrations secret's key on AWS, the environment locally."""
    if config.secrets_name:
        return f"the integrations secret's key {key!r}"
    return f"{key.upper()} in the environment (the integrations secret's key {key!r} when deployed)"
