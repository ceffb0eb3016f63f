"""The API: ``POST /runs`` names its workflow (``triggers/api.py`` checks its caller and reads its body). Its run
answers nowhere: the caller reads the run's record."""

from __future__ import annotations

from ..access import Requester
from ..inbound import TriggerEvent
from ..triggers import api
from .base import Intake, Request, Source


class Api(Source):
    answers_caller = True
    name = "api"
    route = "/runs"

    def parse(self, request: Request) -> Intake:
        return api.parse(request.raw, request.config, request.workflows)

    def requester(self, event: TriggerEvent) -> Requester:
        """The caller: its IAM ARN, or ``api-key`` (access.groups' ``api_callers``)."""
        return Requester(f"api:{event.user}", event.user, (("api_callers", event.user),))
