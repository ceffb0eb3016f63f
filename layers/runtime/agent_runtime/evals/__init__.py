"""Evals: cases beside each workflow, run as normal stored runs, checked, reported, compared.

``agent-runtime eval WORKFLOW`` is the command; :class:`Runner` runs cases, :func:`build_report` sums them up.
"""

from __future__ import annotations

from .cases import Case, Stub, StubRule, load_cases, suite_files
from .checks import CheckResult, Observed, evaluate
from .exceptions import SuiteError
from .expect import Expect, Judge, ToolExpect
from .report import build_report, compare, junit, load_report, table
from .runner import Attempt, EvalOptions, Runner

__all__ = [
    "Attempt",
    "Case",
    "CheckResult",
    "EvalOptions",
    "Expect",
    "Judge",
    "Observed",
    "Runner",
    "Stub",
    "StubRule",
    "SuiteError",
    "ToolExpect",
    "build_report",
    "compare",
    "evaluate",
    "junit",
    "load_cases",
    "load_report",
    "suite_files",
    "table",
]
