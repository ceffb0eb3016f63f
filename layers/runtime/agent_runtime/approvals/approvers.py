"""Approvers for local runs: a fixed answer (``--approve all|none``) or a question in the terminal."""

from __future__ import annotations

import datetime as dt
from typing import TextIO

from .gate import ApprovalRequest, Decision


class FixedApprover:
    """The same answer for every call: what a non-interactive run was told (``--approve all`` or ``none``)."""

    def __init__(self, approve: bool, who: str) -> None:
        self.approve, self.who = approve, who

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        return (Decision.APPROVED if self.approve else Decision.DENIED), self.who


class TerminalApprover:
    """Asks on the terminal: the tool, its arguments (secrets redacted), y/n."""

    def __init__(self, ask: TextIO, answer: TextIO, who: str = "the terminal's user") -> None:
        self.ask, self.answer, self.who = ask, answer, who

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        until = dt.datetime.fromtimestamp(request.expires_at).strftime("%Y-%m-%d %H:%M")
        self.ask.write(f"\nagent-runtime: the run wants to call {request.tool} (needs approval until {until}):\n")
        self.ask.write(request.summary + "\nRun it? [y/N] ")
        self.ask.flush()
        reply = self.answer.readline().strip().lower()
        return (Decision.APPROVED if reply in ("y", "yes") else Decision.DENIED), self.who
