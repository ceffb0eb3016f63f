"""A coordinator script's steps, journalled in the run's state: what each call and ask gave, by what it is.

A step is known by its name (``step=``, else the tool's), its tool (``ask`` for an ask), a digest of its arguments
(of the prompt and schema for an ask), and how many times the script has made that same step before in this
invocation. A run resumed after the deadline or an approval runs the script again from the top: a step it made
before returns (or raises) what it did then; a step it now makes differently — a name used twice, a script changed
while an approval waited — is another step, so no call is ever given another's result. The journal is the run's:
the thread's next turn (another run id) makes its steps afresh, with call ids of its own (``turns.call_id_for``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypedDict, cast

from .. import messages as msgs
from ..approvals.gate import APPROVALS, Decision
from ..models import ToolCall
from ..state import Slot
from ..steps import RanTools, Run


class Entry(TypedDict, total=False):
    name: str  # the step's name, as the script gave it
    tool: str  # the tool, or "ask"
    value: str  # what it gave: a tool's result, a model's answer (JSON when a schema was asked for)
    error: str  # what went wrong instead: denied | failed | invalid_answer
    reason: str  # why, for the script's exception


# {"run": run id, "steps": {key: Entry}, "calls": {call id: [key, name]}}: another run's is dropped.
STEPS: Slot[dict[str, Any]] = Slot("script_steps", dict, owner=__name__)
# Before steps were known by what they call (a run suspended then resumes on this version): {"run", "steps":
# {name: text}, "calls": {call id: name}}, read to finish that run without repeating its steps.
LEGACY: Slot[dict[str, Any]] = Slot("script_journal", dict, owner=__name__)


@dataclass
class StepKeys:
    """The keys of one invocation's steps, in the order the script makes them."""

    seen: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)  # the older keys: a step's name, else its tool's and count

    def next(self, name: str, tool: str, arguments: str, step: str | None) -> tuple[str, str]:
        """The step's key, and its key in an older journal."""
        digest = hashlib.sha256(arguments.encode()).hexdigest()[:16]
        identity = f"{name}|{tool}|{digest}"
        self.seen[identity] += 1
        self.kinds[tool] += 1
        return f"{identity}#{self.seen[identity]}", step or f"{tool}#{self.kinds[tool]}"


@dataclass
class Journal:
    """The run's journal of steps (``steps`` by key; ``calls``: a call's key and name, until it is answered)."""

    run: Run
    steps: dict[str, Entry]
    calls: dict[str, list[str]]

    @classmethod
    def of(cls, run: Run) -> Journal:
        stored = STEPS.use(run.state.context)
        if stored.get("run") != run.state.run_id:
            stored.clear()
            stored.update({"run": run.state.run_id, "steps": {}, "calls": {}})
        legacy = LEGACY.get(run.state.context)
        if legacy and legacy.get("run") != run.state.run_id:
            LEGACY.clear(run.state.context)
        return cls(run, stored["steps"], stored["calls"])

    def find(self, key: str, older: str) -> Entry | None:
        """The step's entry, if it was made before in this run."""
        if key in self.steps:
            return self.steps[key]
        found = LEGACY.get(self.run.state.context).get("steps", {}).get(older)
        if isinstance(found, str):
            return {"name": older, "value": found}
        return cast(Entry, found) if isinstance(found, dict) else None

    def started(self, call_id: str, key: str, name: str) -> None:
        self.calls[call_id] = [key, name]

    def finished(self, call_id: str, entry: Callable[[str], Entry]) -> Entry:
        """A call answered: its entry (made from the step's name) under its step's key."""
        if call_id in self.calls:
            key, name = self.calls.pop(call_id)
            made = self.steps[key] = entry(name)
            return made
        legacy = LEGACY.get(self.run.state.context)
        older = legacy.get("calls", {}).pop(call_id, None)
        made = entry(older or call_id)
        if older is not None:
            legacy["steps"][older] = made
        return made


def settled(run: Run, call: ToolCall, result: RanTools, name: str) -> Entry:
    """What an answered call gave the script: its result, or why it gave none (not run: denied; or failed)."""
    entry: Entry = {"name": name, "tool": call.name}
    text = _result_of(run, call.id)
    outcome = next((outcome for outcome in result.outcomes if outcome.call.id == call.id), None)
    if outcome is None:  # answered without running: the approval gate's refusal
        return {**entry, "error": "denied", "reason": _refusal(run, call.id, text)}
    if outcome.is_error:
        return {**entry, "error": "failed", "reason": text.removeprefix("ERROR: ")}
    return {**entry, "value": text}


def _refusal(run: Run, call_id: str, text: str) -> str:
    approval = APPROVALS.get(run.state.context).get(call_id)
    if approval is None or approval["status"] not in (Decision.DENIED, Decision.EXPIRED):
        return text.removeprefix("ERROR: ")
    if approval["status"] == Decision.EXPIRED:
        return "its approval expired before anyone decided; it did not run"
    return f"denied by {approval['by'] or 'someone'}; it did not run"


def _result_of(run: Run, call_id: str) -> str:
    for message in reversed(run.state.messages):
        if message["role"] == "tool" and message.get("tool_call_id") == call_id:
            return msgs.text_of(message)
    return ""  # never: every call of a step is answered before its step settles
