"""A case's ``approve``: the decision on the calls that need one, as ``--approve`` gives it in a real run.

``none`` (the default) denies them, ``all`` approves them; a list of ``{tool, when, decision}`` decides call by
call, the first rule whose tool and argument patterns match (any other call is denied): what ``eval add`` writes
for a run whose people approved some calls and denied others, so the case replays as the run went.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..approvals.gate import ApprovalRequest, Decision
from ..sections import Report, check_keys
from .expect import argument_text, search, vetted

DECISIONS = ("approved", "denied", "expired")


@dataclass(frozen=True)
class ApproveRule:
    tool: str
    decision: str  # approved | denied | expired
    when: Mapping[str, str] = field(default_factory=dict)  # argument → regex, as a stub rule's


Approve = str | tuple[ApproveRule, ...]  # "none", "all", or the decisions call by call


def parse_approve(value: Any, report: Report) -> Approve:
    if value is None or value in ("none", "all"):
        return value or "none"
    if not isinstance(value, list) or not value:
        report("approve", "must be none, all, or a list of {tool, when: {argument: regex}, decision}")
        return "none"
    rules = [rule for i, item in enumerate(value) if (rule := _rule(item, f"approve[{i}]", report)) is not None]
    return tuple(rules) if len(rules) == len(value) else "none"


def _rule(item: Any, where: str, report: Report) -> ApproveRule | None:
    if not isinstance(item, Mapping) or not isinstance(item.get("tool"), str) or not item["tool"]:
        report(where, "must be a mapping with tool (a name), decision, and optional when: {argument: regex}")
        return None
    check_keys(where, item, ("tool", "when", "decision"), report)
    decision = item.get("decision")
    if decision not in DECISIONS:
        report(f"{where}.decision", f"must be one of {', '.join(DECISIONS)}, not {decision!r}")
        return None
    when = item.get("when") or {}
    if not isinstance(when, Mapping):
        report(f"{where}.when", "must map argument names to regular expressions")
        return None
    patterns = {str(k): p for k, v in when.items() for p in vetted(str(v), f"{where}.when", report)}
    return ApproveRule(item["tool"], str(decision), patterns) if len(patterns) == len(when) else None


class CaseApprover:
    """Decides as the case says; who decided reads ``the eval case (approve: none)`` or names the rule."""

    def __init__(self, approve: Approve) -> None:
        self.approve = approve

    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        if isinstance(self.approve, str):
            decision = Decision.APPROVED if self.approve == "all" else Decision.DENIED
            return decision, f"the eval case (approve: {self.approve})"
        arguments = _arguments(request.summary)
        for index, rule in enumerate(self.approve):
            if rule.tool == request.tool and _matches(rule.when, arguments):
                return Decision(rule.decision), f"the eval case (approve[{index}])"
        return Decision.DENIED, "the eval case (no approve rule for this call)"


def _arguments(summary: str) -> dict[str, Any]:
    """The call's arguments as the approver is shown them (JSON; a secret-looking key's value reads ***)."""
    try:
        value = json.loads(summary)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _matches(when: Mapping[str, str], arguments: Mapping[str, Any]) -> bool:
    try:
        return all(search(pattern, argument_text(arguments.get(key))) for key, pattern in when.items())
    except TimeoutError:  # a pattern that backtracks decides nothing: the call is denied
        return False


@dataclass(frozen=True)
class Decided:
    """A call a person decided: its tool, its arguments (None when they are not JSON) and the decision."""

    tool: str
    arguments: Any
    decision: str  # approved | denied | expired


def decisions(messages: list[Any], context: Mapping[str, Any]) -> dict[str, Decided]:
    """Each call of a stored thread a person decided (approved, denied, or let expire), by call id: its tool,
    its arguments (as parsed; None when they are not JSON) and the decision."""
    from ..approvals.gate import APPROVALS

    entries = APPROVALS.get(context)
    found: dict[str, Decided] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            entry, name = entries.get(call["id"]), call["function"]["name"]
            if entry is None or entry["status"] not in DECISIONS or entry["tool"] != name:
                continue
            try:
                arguments = json.loads(call["function"]["arguments"] or "{}")
            except ValueError:
                arguments = None
            found[call["id"]] = Decided(name, arguments, entry["status"])
    return found


def approve_setting(decided: Mapping[str, Decided]) -> Any:
    """The ``approve`` that replays these decisions: ``all`` or ``none`` when they agree, else a rule per call,
    keyed by its exact arguments (a secret-looking one is left out: the approver is shown it as ***)."""
    import re

    from ..approvals.gate import SECRET_KEYS

    said = {entry.decision for entry in decided.values()}
    if said in ({"approved"}, {"denied"}):
        return "all" if said == {"approved"} else "none"
    rules = []
    for entry in decided.values():
        arguments = entry.arguments if isinstance(entry.arguments, dict) else {}
        shown = {k: v for k, v in arguments.items() if not any(word in k.lower() for word in SECRET_KEYS)}
        when = {k: f"^{re.escape(argument_text(v))}$" for k, v in shown.items()}
        rules.append({"tool": entry.tool, **({"when": when} if when else {}), "decision": entry.decision})
    return rules
