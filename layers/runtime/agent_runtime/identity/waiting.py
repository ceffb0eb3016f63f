"""The calls a run keeps waiting for a person's connection, in its state (by call id, as approvals are): read by
the worker's approval desk and the "connected" handler, written by the gate. Apart from the gate so the worker's
init reads a run's waits without the tools' machinery the gate wraps calls with."""

from __future__ import annotations

from ..approvals.gate import ApprovalEntry
from ..state import Slot


class ConnectEntry(ApprovalEntry):
    provider: str
    person: str
    ask: str


# By call id, as approvals are: a worker sees a run waiting for either (service.approvals.pending).
CONNECTIONS: Slot[dict[str, ConnectEntry]] = Slot("connections", dict, owner=__name__)
