"""What people's connections raise: kept apart so the webhook's routes catch a refusal without loading the flow (its
provider client, its HTTP stack), which the first link followed loads."""

from __future__ import annotations

from ..errors import AgentRuntimeError


class FlowRefused(AgentRuntimeError):
    """A request of the flow that does nothing: its HTTP status and why, in a line the person reads."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason
