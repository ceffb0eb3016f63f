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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .. import events as ev
from .. import inert
from .. import messages as msgs
from ..redaction import redacted
from ..views.run import ModelCall, StoredRun, Usage
from .turns import numbered

CUT = 400  # characters of a tool result or a message shown
ARGUMENTS = 300  # characters of a call's arguments shown


E = TypeVar("E", bound=ev.RunEvent)


def _kind(cls: type[E], said: Callable[[E], str]) -> tuple[type[ev.RunEvent], Callable[[Any], str]]:
    """One row of ``_LINES``, its line checked against its class."""
    return cls, said


def _access(e: ev.AccessDecided) -> str:  # the workflow's access rules: who, their groups, the rule's reason
    what = f"{e.action} {e.tool}" if e.tool else e.action
    groups = f" (groups: {', '.join(e.groups)})" if e.groups else " (in no access group)"
    return f"access: {what} {'allowed' if e.allowed else 'refused'} for {e.who}{groups}: {e.reason}"


def _found(e: ev.ToolsFound) -> str:  # toolsearch: a search (or a found tool called by name) and what it found
    among = f" among {e.candidates} candidate(s)" if e.candidates else ""
    return f"tool search ({e.stage}): found {', '.join(e.found) or 'nothing'}{among}"


# The line a transcript gives an event worth one, by its class: the context engine's work, approvals, skills,
# access, connections and tool search; then what paused or ended the run. An event of another class gets none.
_LINES = dict(
    [
        _kind(ev.VirtualFile, lambda e: f"virtual file {e.file}: {e.tokens:,} tokens kept out of the window"),
        _kind(ev.Masking, lambda e: f"masking: {e.outputs} used output(s) became pointers"),
        _kind(ev.Folding, lambda e: f"folding: {e.turns} old turn(s) folded into rows"),
        _kind(ev.Compaction, lambda e: f"compaction ({e.tactic}): {e.tokens_before:,} -> {e.tokens_after:,} tokens"),
        _kind(ev.ApprovalRequested, lambda e: f"approval asked for {e.tool}"),
        _kind(ev.ApprovalDecided, lambda e: f"approval: {e.tool} {e.decision} by {e.by or 'nobody'}"),
        _kind(ev.SkillLoaded, lambda e: f"skill loaded: {e.skill}"),
        _kind(ev.AccessDecided, _access),
        _kind(ev.ConnectAsked, lambda e: f"connection: {e.person} asked to connect {e.provider} (for {e.tool})"),
        _kind(ev.ConnectSettled, lambda e: f"connection: {e.person} {e.outcome} ({e.provider}, for {e.tool})"),
        _kind(ev.ToolsFound, _found),
        _kind(ev.AwaitingApproval, lambda e: f"waiting for approval of {', '.join(e.calls)}"),
        _kind(ev.Suspended, lambda e: f"suspended: {e.reason}"),
        _kind(ev.CostLimitReached, lambda e: f"spend limit: {e.reason}"),
        _kind(ev.LimitReached, lambda e: f"tool-call limit: {e.reason}"),
        _kind(ev.Stopped, lambda e: f"stopped by {e.by} ({e.via})"),
        _kind(ev.Failed, lambda e: f"failed: {e.error}"),
    ]
)


def _said(event: ev.RunEvent) -> str | None:
    said = _LINES.get(type(event))
    return None if said is None else said(event)


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a run's story: ``kind`` user | turn | event | assistant | call | result; texts already cut."""

    kind: str
    text: str
    detail: str = ""  # a call's arguments; a turn's cost


def first_turn(run: StoredRun) -> int:
    """The first turn a run's record numbers (a thread's turns number on across its runs); 0: none."""
    turns = [call.turn for call in run.model_calls if call.turn > 0]
    turns += [call.turn for call in run.tool_calls if call.turn > 0]
    return min(turns, default=0)


def parts(run: StoredRun, earlier: Sequence[tuple[str, int]] = ()) -> list[tuple[int, str]]:
    """Where each run of its thread begins in a later turn's history (which holds the earlier runs' words too):
    (first turn, whose part). ``earlier``: the thread's runs before this one, each with its first turn; without
    them the earlier turns are one part. None for a run that is its thread's first."""
    own = first_turn(run)
    if own <= 1:
        return []
    before = sorted((turn, f"run {run_id}") for run_id, turn in earlier if 0 < turn < own)
    return [*(before or [(1, "earlier runs of its thread")]), (own, f"this run, {run.run_id}")]


def entries(
    run: StoredRun, history: Sequence[msgs.Message] | None, cut: int = CUT, marks: Sequence[tuple[int, str]] = ()
) -> list[Entry]:
    """The run's turns in order: what the user said, each turn (its cost) with the engine's events, the model's
    words, its calls (arguments) and their results; events of no turn last. ``marks`` (:func:`parts`): a ``part``
    entry where each run of the thread begins, before the message that started it. ``run`` and ``history``
    redacted already (``StoredRun.redacted``, ``redaction.redacted``): the texts are cut here."""
    found: list[Entry] = []
    costs = _costs_by_turn(run.model_calls)
    events = _events_by_turn(run.events)
    turns = iter(numbered(run, history or []))  # as the record numbers them, across a thread's runs (turns.py)
    part = ""
    for message in history or []:
        role, text = message["role"], msgs.text_of(message)
        if role == "assistant":
            turn = next(turns)
            whose = next((label for first, label in reversed(marks) if first <= turn), part)
            if whose != part:  # before the person's words that started it
                at = len(found)
                while at and found[at - 1].kind == "user":
                    at -= 1
                found.insert(at, Entry("part", whose))
                part = whose
            found.append(Entry("turn", f"turn {turn}", costs.get(turn, "")))
            found += [Entry("event", line) for line in events.pop(turn, [])]
            if text:
                found.append(Entry("assistant", clip(text, cut)))
            for call in message.get("tool_calls") or []:
                function = call["function"]
                found.append(Entry("call", clip(function["name"], 80), clip(function["arguments"], ARGUMENTS)))
        elif role in ("tool", "user"):
            found.append(Entry("result" if role == "tool" else "user", clip(text, cut)))
    return found + [Entry("event", line) for rest in events.values() for line in rest]


def transcript(
    run: StoredRun,
    history: Sequence[msgs.Message] | None,
    redact: Callable[[str], str] = str,
    *,
    thread: str | None = None,
    earlier: Sequence[tuple[str, int]] = (),
) -> str:
    """The run for a terminal: redacted whole by ``redact`` (the declared secrets), then cut, then inert. A later
    turn of ``thread`` shows the earlier runs' words too, each run's part marked (``earlier``: :func:`parts`)."""
    run, history = run.redacted(redact), redacted(history, redact)
    lines = [_header(run, thread)]
    for entry in entries(run, history, marks=parts(run, earlier)):
        match entry.kind:
            case "part":
                lines.append(f"\n== {_plain(clip(entry.text, 300))} ==")
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
    lines += _ending(run)
    return "\n".join(lines)


def _header(run: StoredRun, thread: str | None) -> str:
    helpers = f" (helpers ${run.helpers_cost:.4f})" if run.helpers_cost else ""
    spent = "-" if run.cost_usd is None else f"${run.cost_usd:.4f}{helpers}"
    started, ended = str(run.started_at)[:19], str(run.ended_at)[:19]
    head = f"run {run.run_id} · {run.workflow} · {run.status} · {run.model}"
    own = " (this run's)" if first_turn(run) > 1 else ""  # the words below hold its thread's earlier runs too
    in_thread = f" · thread {clip(thread, 200)}" if thread else ""
    return (
        f"{_plain(clip(head, 300))} · {len(run.model_calls)} model calls{own} · {run.usage.total_tokens:,} tokens · "
        f"{spent}\n" + inert.terminal(f"started {started} · ended {ended}{in_thread}")
    )


def _costs_by_turn(calls: Sequence[ModelCall]) -> dict[int, str]:
    found: dict[int, list[ModelCall]] = defaultdict(list)
    for call in calls:
        found[call.turn].append(call)
    shown = {}
    for turn, made in found.items():
        spent = sum(c.cost_usd or 0.0 for c in made)
        usage = [c.usage or Usage() for c in made]
        shown[turn] = (
            f" · ${spent:.4f} · {sum(u.prompt_tokens for u in usage):,} in / "
            f"{sum(u.completion_tokens for u in usage):,} out"
        )
    return shown


def _events_by_turn(events: Sequence[ev.RunEvent]) -> dict[int, list[str]]:
    found: dict[int, list[str]] = defaultdict(list)
    for event in events:
        line = _said(event)
        if line is not None:
            found[ev.turn_of(event)].append(clip(line, 300))
    return found


def _ending(run: StoredRun) -> list[str]:
    lines = ["", "answer: " + _plain(run.final_answer or "(none)")]
    if run.stop_reason:
        lines.append("why it ended: " + _plain(clip(run.stop_reason, CUT)))
    for child in run.children:
        spent = "-" if child.cost_usd is None else f"${child.cost_usd:.4f}"
        line = f"helper {child.run_id}: {child.status} · {spent} · {len(child.tool_calls)} tool calls"
        lines.append(_plain(clip(line, 300)))
    for rating in run.feedback:
        lines.append(_plain(clip(f"feedback: {rating.by} said {rating.verdict}", 300)))
    return lines


def clip(value: Any, limit: int) -> str:
    """``value`` as text, cut at ``limit`` characters (the rest's size said)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text) - limit:,} more characters)"


def _plain(text: str) -> str:
    """A cut text for the terminal: inert, lines indented under their entry."""
    return inert.terminal(text).replace("\n", "\n        ")
