"""The API: ``POST /runs`` names its workflow (``triggers/api.py`` checks its caller and reads its body). Its run
answers nowhere: the caller reads the run's record."""

from __future__ import annotations

from ..triggers import api
from .base import Intake, Request, Source


class Api(Source):
    name = "api"
    route = "/runs"

    def parse(self, request: Request) -> Intake:
        return api.parse(request.raw, request.config, request.workflows)
