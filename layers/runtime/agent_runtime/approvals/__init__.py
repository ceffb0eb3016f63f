"""Approval of risky tool calls: a gate in the loop, and approvers (terminal, fixed, a chat channel)."""

from __future__ import annotations

from .gate import APPROVALS, ApprovalGate, ApprovalRequest, Approver, Decision, refusal, summarize

__all__ = ["APPROVALS", "ApprovalGate", "ApprovalRequest", "Approver", "Decision", "refusal", "summarize"]
