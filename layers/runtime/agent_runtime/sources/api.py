"""The API: ``POST /runs`` names its workflow (``triggers/api.py`` checks its caller and reads its body). Its run
answers nowhere: the caller reads the run's record."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..access import Requester
from ..inbound import TriggerEvent
from ..triggers import api
from .base import Intake, Request, Source

if TYPE_CHECKING:
    from ..workflows import Workflow


class Api(Source):
    answers_caller = True
    name = "api"
    route = "/runs"

    def parse(self, request: Request) -> Intake:
        return api.parse(request.raw, request.config, request.workflows)

    def requester(self, event: TriggerEvent) -> Requester:
        """The caller: its IAM ARN, or ``api-key`` (access.groups' ``api_callers``)."""
        return Requester(f"api:{event.user}", event.user, (("api_callers", event.user),))

    def acts_for(self, event: TriggerEvent, workflow: Workflow) -> tuple[str | None, str]:
        """A /runs call is a system's, not a person's: its tools acting as the requester refuse."""
        return None, "a /runs call acts for no person (start it from Slack, or from a schedule with an owner)"
