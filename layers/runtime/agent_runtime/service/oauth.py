"""The stack's own authorisation routes (``GET /oauth/<provider>/start`` and ``/callback``) as the webhook serves
them: the link a person was sent leads to the provider, and the provider's answer comes back here — checked, used
once, the tokens sealed in the store — and wakes the run that waits for it (a "connected" queue message).

Every answer is a short HTML page a person reads in their browser, never a token, and never cached."""

from __future__ import annotations

import html
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from aws_lambda_powertools import Logger

from ..identity.exceptions import FlowRefused
from ..triggers.queue import EventQueue
from ..triggers.queued import ConnectedMessage
from ._http import Response

if TYPE_CHECKING:
    from ..identity.flow import ConnectFlow

HEADERS = {
    "Cache-Control": "no-store",
    "Referrer-Policy": "no-referrer",  # the provider's page never learns the link, the callback's query stays here
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
}
SAID = {
    "connected": "Connected {provider}. You can close this tab: the run that asked goes on.",
    "denied": "You declined to connect {provider}. The run that asked goes on without it.",
}


class OAuthRoutes:
    def __init__(self, flow: Callable[[], ConnectFlow] | None, queue: EventQueue, log: Logger) -> None:
        self.flow, self.queue, self.log = flow, queue, log

    def start(self, raw: Mapping[str, Any], provider: str) -> Response:
        try:
            target = self._flow().start(provider, query_of(raw), base=base_of(raw))
        except FlowRefused as refused:
            return self._refused(refused)
        self.log.info("oauth start", extra={"provider": provider})
        return Response(302, "text/html; charset=utf-8", "", headers={**HEADERS, "Location": target})

    def callback(self, raw: Mapping[str, Any], provider: str) -> Response:
        try:
            finished = self._flow().callback(provider, query_of(raw), base=base_of(raw))
        except FlowRefused as refused:
            return self._refused(refused)
        ask, outcome = finished.ask, finished.outcome.split(" ", 1)[0]
        message = ConnectedMessage(ask.run_id, ask.provider, ask.person, outcome, finished.attempt)
        self.queue.send(message.body(), group=ask.thread_id, dedup=f"connected:{finished.attempt}")
        self.log.info("oauth answered", extra={"provider": provider, "person": ask.person, "outcome": outcome})
        return _page(200, SAID[outcome].format(provider=provider))

    def _flow(self) -> ConnectFlow:
        if self.flow is None:
            raise FlowRefused(404, "connections are not set up on this stack")
        return self.flow()

    def _refused(self, refused: FlowRefused) -> Response:
        self.log.warning("oauth refused", extra={"status": refused.status, "reason": refused.reason})
        return _page(refused.status, refused.reason)


def _page(status: int, text: str) -> Response:
    body = (
        "<!doctype html><html lang=en><meta charset=utf-8><title>agent-runtime</title>"
        f"<body style='font:16px system-ui;margin:3em'><p>{html.escape(text)}</p></body></html>"
    )
    return Response(status, "text/html; charset=utf-8", body, headers=HEADERS)


def base_of(raw: Mapping[str, Any]) -> str | None:
    """The stack's address as API Gateway was called (the webhook is not told its own: its API names it)."""
    domain = (raw.get("requestContext") or {}).get("domainName")
    return f"https://{domain}" if isinstance(domain, str) and domain and "/" not in domain else None


def query_of(raw: Mapping[str, Any]) -> dict[str, str]:
    """API Gateway's query (a field given twice is joined with commas there: taken as it is, and refused by the
    flow's strict parsers if it is not what it must be)."""
    return {str(k): str(v) for k, v in (raw.get("queryStringParameters") or {}).items()}
