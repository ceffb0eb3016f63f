"""The webhook's HTTP surface: API Gateway's HTTP API events (payload 2.0) in, its proxy responses out, each
request routed by its method and a path template (``/runs/<run_id>/stop``: one segment per parameter).

Our own, a page long, rather than Powertools' ``event_handler``: that package imports every resolver it has
(AppSync, Bedrock agents, VPC Lattice, asyncio) when any one is imported — 27 ms of CPU on every cold start, an
eighth of the webhook's, for a handful of routes that need a method and a path matched (``make bench``; issue 49).
It matches as Powertools' ``APIGatewayHttpResolver`` did: the raw path, less a named stage, whole."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError

_PARAMETER = re.compile(r"<(\w+)>")
_SEGMENT = r"[^/]+"  # a parameter is one path segment, as written (API Gateway leaves it percent-encoded)
_METHODS = frozenset({"GET", "POST"})


@dataclass(frozen=True, slots=True)
class Response:
    """What a route answers: a status, its body and the body's type, and headers of its own."""

    status_code: int
    content_type: str
    body: str
    headers: Mapping[str, str] = field(default_factory=dict)

    def proxy(self) -> dict[str, Any]:
        """The answer as API Gateway's HTTP API takes it back from a Lambda proxy integration."""
        headers = {"Content-Type": self.content_type, **self.headers}
        return {"statusCode": self.status_code, "headers": headers, "body": self.body, "isBase64Encoded": False}


def json_response(status: int, body: Mapping[str, Any]) -> Response:
    return Response(status, "application/json", json.dumps(body))


# A route's handler: called with the API Gateway event and the path's parameters by name.
Handler = Callable[..., Response]


@dataclass(frozen=True, slots=True)
class _Route:
    method: str
    template: str
    pattern: re.Pattern[str]
    handler: Handler


class Router:
    """The routes, in the order they were added; the first whose method and template match a request answers it."""

    def __init__(self) -> None:
        self._routes: list[_Route] = []

    def add(self, method: str, template: str, handler: Handler) -> None:
        """``handler`` answers ``method template``; a template a route already takes for the method is refused."""
        if method not in _METHODS or not template.startswith("/"):
            raise ConfigError(f"a route is a method of {sorted(_METHODS)} and a path from /, not {method} {template}")
        if any(r.method == method and r.template == template for r in self._routes):
            raise ConfigError(f"two routes take {method} {template}")
        pattern = re.compile(_PARAMETER.sub(lambda m: f"(?P<{m.group(1)}>{_SEGMENT})", re.escape(template)))
        self._routes.append(_Route(method, template, pattern, handler))

    def resolve(self, event: Mapping[str, Any]) -> dict[str, Any]:
        """The answer to one API Gateway event: its route's, 405 for a path no route takes by that method, 404 for
        a path none takes, 400 for an event that is not an HTTP API request."""
        method, path = _method_and_path(event)
        if method is None or path is None:
            return json_response(400, {"error": "not an API Gateway HTTP API (payload 2.0) request"}).proxy()
        allowed = []
        for route in self._routes:
            found = route.pattern.fullmatch(path)
            if found is not None and route.method == method:
                return route.handler(event, **found.groupdict()).proxy()
            if found is not None:
                allowed.append(route.method)
        if allowed:
            answer = json_response(405, {"error": f"{method} is not served here"})
            return Response(405, answer.content_type, answer.body, {"Allow": ", ".join(allowed)}).proxy()
        return json_response(404, {"error": "no route here"}).proxy()


def _method_and_path(event: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The request's method and its path less a named stage (``$default`` adds none to the path)."""
    context = event.get("requestContext")
    http = context.get("http") if isinstance(context, Mapping) else None
    method = http.get("method") if isinstance(http, Mapping) else None
    path = event.get("rawPath")
    if not isinstance(method, str) or not isinstance(path, str):
        return None, None
    stage = context.get("stage") if isinstance(context, Mapping) else None
    if isinstance(stage, str) and stage and stage != "$default" and path.startswith(f"/{stage}/"):
        path = path[len(stage) + 1 :]
    return method.upper(), path
