"""Spend: one ledger for everything a run causes (``ledger``) and the limits checked against it (``limit``)."""

from __future__ import annotations

from .ledger import BAD_USAGE, NO_USAGE, SPENT, Ledger, describe, usage_problem
from .limit import (
    COST_NOTE,
    GRANTED,
    HOW_TO_GO_ON,
    MIN_REPLY,
    Estimate,
    GoOn,
    Scope,
    SpendLimit,
    cli_go_on,
    estimate_next,
    last_answer_cap,
    request_cap,
    smallest_run,
)

__all__ = [
    "BAD_USAGE",
    "COST_NOTE",
    "GRANTED",
    "HOW_TO_GO_ON",
    "MIN_REPLY",
    "NO_USAGE",
    "SPENT",
    "Estimate",
    "GoOn",
    "Ledger",
    "Scope",
    "SpendLimit",
    "cli_go_on",
    "describe",
    "estimate_next",
    "last_answer_cap",
    "request_cap",
    "smallest_run",
    "usage_problem",
]
