"""A run as people read it (``agent-runtime runs show``): each turn's words, each tool call with its arguments and
a cut of its result, the context engine's work (virtual files, masking, folding, compaction), approvals, helpers,
what each model call cost, the answer and what people said of it. ``--json`` prints the record itself.

The words come from the run's checkpoint (its history as the model last saw it: masked outputs read as their
pointers there), the rest from its record. Both are redacted of the declared secrets first, whole (a cut first
could leave a secret's start); :func:`entries` then walks them once, each value cut; the terminal's
:func:`transcript` and the run page (``pages``) each render the entries inert for their medium (``inert``), so a
hostile tool result can neither rewrite the terminal, reorder what a person reads, nor break the page. The final
answer is shown whole: it is what a person runs ``runs show`` for."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from . import inert
from . import messages as msgs
from .redaction import redacted

CUT = 400  # characters of a tool result or a message shown
ARGUMENTS = 300  # characters of a call's arguments shown
_EVENTS = {  # the record's events worth a line in the transcript, and how each reads
    "virtual_file": lambda e: f"virtual file {e.get('file')}: {e.get('tokens', 0):,} tokens kept out of the window",
    "masking": lambda e: f"masking: {e.get('count', e.get('outputs', '?'))} used output(s) became pointers",
    "folding": lambda e: f"folding: {e.get('turns', '?')} old turn(s) folded into rows",
    "compaction": lambda e: (
        f"compaction ({e.get('tactic')}): {e.get('tokens_before', 0):,} -> {e.get('tokens_after', 0):,} tokens"
    ),
    "approval_requested": lambda e: f"approval asked for {e.get('tool')}",
    "approval_decided": lambda e: f"approval: {e.get('tool')} {e.get('decision')} by {e.get('by') or 'nobody'}",
    "skill_loaded": lambda e: f"skill loaded: {e.get('skill')}",
    "tools_found": lambda e: (  # toolsearch: a search (or a found tool called by name) and what it found
        f"tool search ({e.get('stage')}): found {', '.join(e.get('found') or []) or 'nothing'}"
        + (f" among {e.get('candidates')} candidate(s)" if e.get("candidates") else "")
    ),
    "awaiting_approval": lambda e: f"waiting for approval of {', '.join(e.get('calls') or [])}",
    "suspended": lambda e: f"suspended: {e.get('reason')}",
    "stopped": lambda e: f"stopped by {e.get('by')} ({e.get('via')})",
    "cost_limit": lambda e: f"spend limit: {e.get('reason')}",
    "tool_call_limit": lambda e: f"tool-call limit: {e.get('reason')}",
    "failed": lambda e: f"failed: {e.get('error')}",
}


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a run's story: ``kind`` user | turn | event | assistant | call | result; texts already cut."""

    kind: str
    text: str
    detail: str = ""  # a call's arguments; a turn's cost


def entries(record: Mapping[str, Any], history: Sequence[Mapping[str, Any]] | None, cut: int = CUT) -> list[Entry]:
    """The run's turns in order: what the user said, each turn (its cost) with the engine's events, the model's
    words, its calls (arguments) and their results; events of no turn last. ``record`` and ``history`` redacted
    already (``redaction.redacted``): the texts are cut here."""
    found: list[Entry] = []
    costs = _costs_by_turn(record.get("model_calls") or [])
    events = _events_by_turn(record.get("events") or [])
    turn = 0
    for message in history or []:
        role, text = message.get("role"), msgs.text_of(message)  # type: ignore[arg-type]
        if role == "assistant":
            turn += 1
            found.append(Entry("turn", f"turn {turn}", costs.get(turn, "")))
            found += [Entry("event", line) for line in events.pop(turn, [])]
            if text:
                found.append(Entry("assistant", clip(text, cut)))
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                found.append(Entry("call", clip(function.get("name"), 80), clip(function.get("arguments"), ARGUMENTS)))
        elif role in ("tool", "user"):
            found.append(Entry("result" if role == "tool" else "user", clip(text, cut)))
    return found + [Entry("event", line) for rest in events.values() for line in rest]


def transcript(
    record: Mapping[str, Any], history: Sequence[Mapping[str, Any]] | None, redact: Callable[[str], str] = str
) -> str:
    """The run for a terminal: redacted whole by ``redact`` (the declared secrets), then cut, then inert."""
    record, history = redacted(record, redact), redacted(history, redact)
    lines = [_header(record)]
    for entry in entries(record, history):
        match entry.kind:
            case "turn":
                lines.append(f"\n-- {entry.text}{entry.detail}")
            case "event":
                lines.append(f"   [{_plain(entry.text)}]")
            case "assistant":
                lines.append("assistant: " + _plain(entry.text))
            case "call":
                lines.append(f"  -> {_plain(entry.text)} {_plain(entry.detail)}")
            case "result":
                lines.append("     <- " + _plain(entry.text))
            case _:
                lines.append("user: " + _plain(entry.text))
    if history is None:
        lines.append("(no checkpoint kept: the words of this run are not stored; --json shows its record)")
    lines += _ending(record)
    return "\n".join(lines)


def _header(record: Mapping[str, Any]) -> str:
    usage = record.get("usage") or {}
    cost = record.get("cost") or {}
    helpers = f" (helpers ${cost['helpers']:.4f})" if cost.get("helpers") else ""
    spent = "-" if record.get("cost_usd") is None else f"${record['cost_usd']:.4f}{helpers}"
    calls = len(record.get("model_calls") or [])
    started, ended = str(record.get("started_at"))[:19], str(record.get("ended_at"))[:19]
    head = f"run {record.get('run_id')} · {record.get('workflow')} · {record.get('status')} · {record.get('model')}"
    return f"{_plain(clip(head, 300))} · {calls} model calls · {usage.get('total_tokens', 0):,} tokens · {spent}\n" + (
        inert.terminal(f"started {started} · ended {ended}")
    )


def _costs_by_turn(calls: Sequence[Mapping[str, Any]]) -> dict[int, str]:
    found: dict[int, list[Mapping[str, Any]]] = defaultdict(list)
    for call in calls:
        found[int(call.get("turn") or 0)].append(call)
    shown = {}
    for turn, made in found.items():
        spent = sum(float(c.get("cost_usd") or 0.0) for c in made)
        usage = [c.get("usage") or {} for c in made]
        shown[turn] = (f" · ${spent:.4f} · {sum(u.get('prompt_tokens', 0) for u in usage):,} in / "
                       f"{sum(u.get('completion_tokens', 0) for u in usage):,} out")  # fmt: skip
    return shown


def _events_by_turn(events: Sequence[Mapping[str, Any]]) -> dict[int, list[str]]:
    found: dict[int, list[str]] = defaultdict(list)
    for event in events:
        render = _EVENTS.get(str(event.get("type")))
        if render is not None:
            found[int(event.get("turn") or 0)].append(clip(render(event), 300))
    return found


def _ending(record: Mapping[str, Any]) -> list[str]:
    lines = ["", "answer: " + _plain(str(record.get("final_answer") or "(none)"))]
    if record.get("stop_reason"):
        lines.append("why it ended: " + _plain(clip(record["stop_reason"], CUT)))
    for child in record.get("children") or []:
        cost = child.get("cost_usd")
        spent = "-" if cost is None else f"${cost:.4f}"
        tools = len(child.get("tool_calls") or [])
        line = f"helper {child.get('run_id')}: {child.get('status')} · {spent} · {tools} tool calls"
        lines.append(_plain(clip(line, 300)))
    for rating in record.get("feedback") or []:
        lines.append(_plain(clip(f"feedback: {rating.get('by')} said {rating.get('verdict')}", 300)))
    return lines


def clip(value: Any, limit: int) -> str:
    """``value`` as text, cut at ``limit`` characters (the rest's size said)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def _plain(text: str) -> str:
    """A cut text for the terminal: inert, lines indented under their entry."""
    return inert.terminal(text).replace("\n", "\n        ")
