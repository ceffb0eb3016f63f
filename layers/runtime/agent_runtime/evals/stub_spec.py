"""A case's ``stubs:`` as written: tool name → its canned answers (text, rules, or a mapping with them).

A stub names a tool of the workflow and replaces only what it returns (``stubs.py`` gives it the real tool's
definition and approval rule). ``description``, ``parameters`` and ``mutating`` are for what the suite cannot
know offline: an MCP server's (or a remote OpenAPI document's) tool as the server lists it, or a tool only the case
has (``extra: true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..sections import Report, check_keys, integer
from .expect import vetted

STUB_KEYS = ("returns", "error", "rules", "description", "parameters", "mutating", "extra")


@dataclass(frozen=True)
class StubRule:
    """One canned answer: used when every ``when`` regex matches its argument (as JSON text)."""

    returns: str
    when: Mapping[str, str] = field(default_factory=dict)
    error: bool = False
    pad_tokens: int = 0  # filler text after the answer: a tool that returns a lot (a long tool loop's pages)


@dataclass(frozen=True)
class Stub:
    """Stands in for the workflow's tool of the same name (Python, MCP, OpenAPI, built-in, the runtime's own); with
    ``extra``, a tool only the case has."""

    name: str
    rules: tuple[StubRule, ...]
    description: str | None = None  # an MCP (or remote OpenAPI) tool's as listed, or an extra tool's
    parameters: Mapping[str, Any] | None = None  # the same: any JSON Schema of type object
    mutating: bool | None = None  # the same; None: not said (a source's tool then counts as mutating)
    extra: bool = False  # a tool the workflow lacks, added for this case


def parse_stubs(value: Any, report: Report) -> list[Stub]:
    if not isinstance(value, Mapping):
        report("stubs", "must map tool names to what they return")
        return []
    return [stub for name, spec in value.items() if (stub := _stub(str(name), spec, report)) is not None]


def _stub(name: str, spec: Any, report: Report) -> Stub | None:
    where = f"stubs.{name}"
    if isinstance(spec, str):
        return Stub(name, (StubRule(spec),))
    if isinstance(spec, list):
        spec = {"rules": spec}
    if not isinstance(spec, Mapping):
        report(where, "must be the text it returns, a list of rules, or {returns | rules, description, parameters}")
        return None
    check_keys(where, spec, STUB_KEYS, report)
    raw_rules = spec.get("rules") or (
        [{"returns": spec["returns"], "error": spec.get("error", False)}] if "returns" in spec else []
    )
    rules = [rule for i, r in enumerate(raw_rules) if (rule := _rule(r, f"{where}.rules[{i}]", report)) is not None]
    if not rules:
        report(where, "needs returns, or rules with returns")
        return None
    parameters = spec.get("parameters")
    if parameters is not None and not (isinstance(parameters, Mapping) and parameters.get("type") == "object"):
        report(f"{where}.parameters", "must be a JSON Schema of type object")
        parameters = None
    flags = {key: spec.get(key) for key in ("mutating", "extra")}
    for key, value in flags.items():
        if value is not None and not isinstance(value, bool):
            report(f"{where}.{key}", "must be true or false")
    description = str(spec["description"]) if spec.get("description") else None
    mutating = flags["mutating"] if isinstance(flags["mutating"], bool) else None
    return Stub(name, tuple(rules), description, parameters, mutating, extra=flags["extra"] is True)


def _rule(value: Any, where: str, report: Report) -> StubRule | None:
    if not isinstance(value, Mapping) or not isinstance(value.get("returns"), str):
        report(where, "must be a mapping with returns (text), and optional when: {argument: regex} and error")
        return None
    check_keys(where, value, ("returns", "when", "error", "pad_tokens"), report)
    pad = integer(where, value, "pad_tokens", 0, report, low=0, high=200_000)
    when = value.get("when") or {}
    if not isinstance(when, Mapping):
        report(f"{where}.when", "must map argument names to regular expressions")
        return None
    patterns = {str(k): p for k, v in when.items() for p in vetted(str(v), f"{where}.when", report)}
    return StubRule(value["returns"], patterns, value.get("error") is True, pad)
