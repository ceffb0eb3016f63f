"""The agent loop and what only it runs: a turn sequenced (``agent``: ``Agent.step``), a turn's tool calls
(``_tool_calls``; ``repeats`` refuses a call that keeps failing the same way), a reply's shaping and the call ids
minted per run and turn (``_turns``), and a run continued in a fresh invocation (``continuation``). The values it
drives — messages, events, state, the record, the run context, the steps' results — sit below, under the models,
tools, files and stores that use them (docs/architecture.md, Floors)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ._turns import call_id_for, remember_ids
    from .agent import (
        CUT_BY_SERVER,
        CUT_BY_WINDOW,
        TRUNCATED,
        Agent,
        AwaitingApproval,
        Final,
        RanTools,
        Run,
        StepResult,
        Stopped,
        Suspended,
        UnrunnableCallsError,
        stopped,
    )
    from .repeats import RepeatedFailures

# Lazy (PEP 562): the worker's handlers continue a run (``continuation``) without loading the loop's machinery,
# which its first run loads.
__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        **dict.fromkeys(("call_id_for", "remember_ids"), "._turns"),
        "RepeatedFailures": ".repeats",
        **dict.fromkeys(
            (
                "CUT_BY_SERVER",
                "CUT_BY_WINDOW",
                "TRUNCATED",
                "Agent",
                "AwaitingApproval",
                "Final",
                "RanTools",
                "Run",
                "StepResult",
                "Stopped",
                "Suspended",
                "UnrunnableCallsError",
                "stopped",
            ),
            ".agent",
        ),
    },
)

__all__ = [
    "CUT_BY_SERVER",
    "CUT_BY_WINDOW",
    "TRUNCATED",
    "Agent",
    "AwaitingApproval",
    "Final",
    "RanTools",
    "RepeatedFailures",
    "Run",
    "StepResult",
    "Stopped",
    "Suspended",
    "UnrunnableCallsError",
    "call_id_for",
    "remember_ids",
    "stopped",
]
