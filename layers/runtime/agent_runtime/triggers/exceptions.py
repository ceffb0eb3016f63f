"""Trigger errors: a request that is refused (and why), a service the webhook needs that is down, a queue message
the worker cannot act on."""

from __future__ import annotations

from ..errors import AgentRuntimeError, ConfigError


class RejectedRequest(AgentRuntimeError):
    """An inbound webhook that is not accepted: unsigned, forged, replayed or malformed. Nothing is enqueued."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class Unavailable(AgentRuntimeError):
    """Not now: the queue or the store did not answer (refused, timed out, throttled, a 5xx), or the same delivery
    is being queued by another request. Nothing was enqueued and no record says it was: the sender's retry is
    taken. ``reason``: what the answer says."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class InvalidMessageError(ConfigError):
    """A queue message the worker cannot act on (an unknown type, the continuation of a run it never saw)."""
