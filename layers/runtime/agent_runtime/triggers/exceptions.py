"""Trigger errors: a request that is refused (and why), a queue message the worker cannot act on."""

from __future__ import annotations

from ..errors import AgentRuntimeError, ConfigError


class RejectedRequest(AgentRuntimeError):
    """An inbound webhook that is not accepted: unsigned, forged, replayed or malformed. Nothing is enqueued."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


class InvalidMessageError(ConfigError):
    """A queue message the worker cannot act on (an unknown type, the continuation of a run it never saw)."""
