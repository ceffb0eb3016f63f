"""What an eval case expects of its run (``expect:``): the checks a suite may name, parsed and vetted — and the
patterns they (and stubs' ``when``) use, bounded in how long one may take on one text."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..sections import Report, check_keys, choice, integer, number, text

EXPECT_KEYS = (
    "status",
    "contains",
    "not_contains",
    "matches",
    "identifiers",
    "tools_called",
    "tools_not_called",
    "tools_found",
    "max_tool_calls",
    "max_model_calls",
    "max_cost_usd",
    "max_seconds",
    "json_schema",
    "judge",
)
STATUSES = ("completed", "failed", "tool_call_limit", "cost_limit", "suspended", "awaiting_approval")
PATTERN_SECONDS = 2.0  # what one expect.matches, tools_called.args or stub `when` pattern may take on one text


@dataclass(frozen=True)
class ToolExpect:
    """A tool that must be called; ``args``: argument name → a regex its value (as JSON text) must match."""

    name: str
    args: Mapping[str, str] = field(default_factory=dict)

    def label(self) -> str:
        return self.name + (f"({', '.join(f'{k}~{v}' for k, v in self.args.items())})" if self.args else "")


@dataclass(frozen=True)
class Judge:
    """An LLM judge: ``rubric`` says what a good answer does; ``model`` defaults to the workflow's model."""

    rubric: str
    model: str | None = None


@dataclass(frozen=True)
class Expect:
    status: str = "completed"
    contains: tuple[str, ...] = ()
    not_contains: tuple[str, ...] = ()
    matches: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    tools_called: tuple[ToolExpect, ...] = ()
    tools_not_called: tuple[str, ...] = ()
    tools_found: tuple[str, ...] = ()  # deferred tools a tool_search must find (toolsearch): a miss is reported
    max_tool_calls: int | None = None
    max_model_calls: int | None = None
    max_cost_usd: float | None = None
    max_seconds: float | None = None
    json_schema: Mapping[str, Any] | None = None
    judge: Judge | None = None

    def only_status(self) -> bool:
        """Nothing but the run's status is checked: the case passes whatever the answer says or the run does."""
        return self == Expect(status=self.status)


def strings(value: Any, key: str, report: Report) -> list[str]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        report(key, "must be a string or a list of non-empty strings")
        return []
    return items


def vetted(value: Any, key: str, report: Report) -> list[str]:
    """Patterns vetted as file_regex's are (length, and counted repeats that would take gigabytes to compile)."""
    from ..errors import ToolError
    from ..files.grep import compile_pattern

    good = []
    for pattern in strings(value, key, report):
        try:
            compile_pattern(pattern, False)
            good.append(pattern)
        except ToolError as error:  # said as before for a pattern that does not parse
            said = str(error).split(": ", 1)[-1] if str(error).startswith("invalid pattern") else str(error)
            report(key, f"{pattern!r} is not a regular expression: {said}" if said != str(error) else said)
    return good


def search(pattern: str, text: str, *, multiline: bool = False) -> bool:
    """``pattern`` found in ``text``, within PATTERN_SECONDS (a pattern that backtracks catastrophically, such as
    ``^(a+)+$`` on 35 characters, raises TimeoutError instead of running for minutes)."""
    import regex

    try:
        return regex.search(pattern, text, regex.MULTILINE if multiline else 0, timeout=PATTERN_SECONDS) is not None
    except TimeoutError:
        raise TimeoutError(
            f"the pattern ran past {PATTERN_SECONDS:g} s (catastrophic backtracking): simplify it"
        ) from None


def parse_expect(data: Any, report: Report) -> Expect:
    if not isinstance(data, Mapping):
        report("expect", "must be a mapping of checks")
        return Expect()
    check_keys("expect", data, EXPECT_KEYS, report)
    return Expect(
        status=choice("expect", data, "status", STATUSES, "completed", report) or "completed",
        contains=tuple(strings(data.get("contains") or [], "expect.contains", report)),
        not_contains=tuple(strings(data.get("not_contains") or [], "expect.not_contains", report)),
        matches=tuple(vetted(data.get("matches") or [], "expect.matches", report)),
        identifiers=tuple(strings(data.get("identifiers") or [], "expect.identifiers", report)),
        tools_called=tuple(_tool_expects(data.get("tools_called") or [], report)),
        tools_not_called=tuple(strings(data.get("tools_not_called") or [], "expect.tools_not_called", report)),
        tools_found=tuple(strings(data.get("tools_found") or [], "expect.tools_found", report)),
        max_tool_calls=integer("expect", data, "max_tool_calls", 0, report, low=0)
        if "max_tool_calls" in data
        else None,
        max_model_calls=integer("expect", data, "max_model_calls", 1, report) if "max_model_calls" in data else None,
        max_cost_usd=number("expect", data, "max_cost_usd", 0.0, report, low=0, high=1e6)
        if "max_cost_usd" in data
        else None,
        max_seconds=number("expect", data, "max_seconds", 0.0, report, low=0, high=86_400)
        if "max_seconds" in data
        else None,
        json_schema=_schema(data.get("json_schema"), report),
        judge=_judge(data.get("judge"), report),
    )


def _tool_expects(value: Any, report: Report) -> list[ToolExpect]:
    if not isinstance(value, list):
        report("expect.tools_called", "must be a list of tool names or {name, args: {argument: regex}}")
        return []
    found = []
    for i, item in enumerate(value):
        if isinstance(item, str) and item:
            found.append(ToolExpect(item))
        elif isinstance(item, Mapping) and isinstance(item.get("name"), str):
            args = item.get("args") or {}
            if not isinstance(args, Mapping):
                report(f"expect.tools_called[{i}].args", "must map argument names to regular expressions")
                continue
            patterns = {str(k): p for k, v in args.items() for p in vetted(v, f"expect.tools_called[{i}].args", report)}
            found.append(ToolExpect(item["name"], patterns))
        else:
            report(f"expect.tools_called[{i}]", "must be a tool name or {name, args}")
    return found


def _schema(value: Any, report: Report) -> Mapping[str, Any] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        report("expect.json_schema", "must be a JSON Schema (a mapping)")
        return None
    import jsonschema

    try:
        jsonschema.validators.validator_for(value).check_schema(value)
    except jsonschema.SchemaError as error:
        report("expect.json_schema", f"not a valid JSON Schema: {error.message}")
        return None
    return value


def _judge(value: Any, report: Report) -> Judge | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = {"rubric": value}
    if not isinstance(value, Mapping):
        report("expect.judge", "must be a rubric, or {rubric, model}")
        return None
    check_keys("expect.judge", value, ("rubric", "model"), report)
    rubric = text("expect.judge", value, "rubric", report)
    model = text("expect.judge", value, "model", report, required=False)
    return Judge(rubric, model) if rubric else None


def argument_text(value: Any) -> str:
    """A tool argument as the text ``when`` and ``args`` patterns match: strings as they are, the rest as JSON."""
    return "" if value is None else value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
