"""The approval gate: a call of a tool that needs a person's yes is asked about, decided, or left waiting.

Waiting never blocks: the loop ends the step with the run ``awaiting_approval`` (checkpointed, the call still
unanswered in the history), and the run resumes when a decision arrives — in another invocation, from a Slack
button, a JIRA comment or the terminal. What was asked and decided is kept in the run state (the approvals slot)
and recorded as events: tool, a hash of the arguments, who decided, when.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol, TypedDict

from ..events import ApprovalDecided, ApprovalRequested
from ..state import Slot

if TYPE_CHECKING:
    from ..models import ToolCall
    from ..steps import Run
    from ..tools import Tool

SECRET_KEYS = ("authorization", "token", "password", "secret", "api_key", "apikey", "credential", "cookie")
INLINE_CHARS = 2_800  # what a chat message shows of the arguments; the whole of them is attached beyond that


class Decision(StrEnum):
    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    EXPIRED = "expired"


class ApprovalEntry(TypedDict):
    tool: str
    arguments_sha256: str
    requested_at: float
    expires_at: float
    status: str
    by: str | None
    decided_at: float | None


# By call id, for the thread's life: loop/_turns.py never gives an id to two calls of a thread (it mints them past every
# key here and in the mutating-call journal), so a decision answers only its own call, never a later turn's.
APPROVALS: Slot[dict[str, ApprovalEntry]] = Slot("approvals", dict, owner=__name__)


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    """What an approver is shown: never a secret, never a whole payload."""

    run_id: str
    call_id: str
    tool: str
    summary: str  # the whole arguments, readable, secret-looking keys redacted: nothing is approved unseen
    arguments_sha256: str
    expires_at: float

    @property
    def code(self) -> str:
        """A short code naming this request, for answers that cannot point at it (a JIRA comment)."""
        return hashlib.sha256(f"{self.run_id}|{self.call_id}".encode()).hexdigest()[:6]

    def shown(self, limit: int = INLINE_CHARS) -> tuple[str, bool]:
        """The arguments as a message shows them, and whether they were cut (then attach them whole)."""
        if len(self.summary) <= limit:
            return self.summary, False
        return self.summary[:limit] + f"\n… ({len(self.summary):,} characters in all: see the attached file)", True


class Approver(Protocol):
    def decide(self, request: ApprovalRequest) -> tuple[Decision, str | None]:
        """APPROVED or DENIED with who decided, or PENDING (asked, not answered yet)."""
        ...


def summarize(arguments: Mapping[str, Any]) -> str:
    """The arguments for a person: JSON, secret-looking keys redacted, nothing cut (the whole of what runs is
    what is approved; a chat that cannot show it all attaches it)."""

    def clean(value: Any, key: str = "") -> Any:
        if any(word in key.lower() for word in SECRET_KEYS):
            return "***"
        if isinstance(value, Mapping):
            return {str(k): clean(v, str(k)) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return json.dumps(clean(dict(arguments)), ensure_ascii=False, indent=1)


def arguments_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:16]


def binds(entry: Mapping[str, Any], call: ToolCall) -> bool:
    """An approval (or a journal entry) answers only the call it was made for: the same tool and arguments."""
    return entry.get("tool") == call.name and entry.get("arguments_sha256") in (None, arguments_hash(call.arguments))


class CallGate(Protocol):
    """What a call waits for before it runs, durably (a person's yes; the requester's connection to a provider):
    the loop asks each gate in turn about the calls it ``asks`` for; PENDING leaves the call unanswered and the
    run waiting, checkpointed, until a message resumes it; DENIED or EXPIRED answer it with ``refusal``."""

    def asks(self, tool: Tool) -> bool: ...

    def check(self, run: Run, call: ToolCall) -> tuple[Decision, str | None]: ...

    def refusal(self, tool: str, decision: Decision, who: str | None) -> str: ...

    def waiting(self, run: Run, call: ToolCall) -> str:
        """What the call waits for, in the run's stop reason (``approval of restart_service``)."""
        ...


class ApprovalGate:
    """Asks ``approver`` about calls that need it; remembers every request and decision in the run state."""

    def __init__(
        self, approver: Approver, *, timeout_hours: float = 24, clock: Callable[[], float] = time.time
    ) -> None:
        self.approver, self.timeout, self.clock = approver, timeout_hours * 3600, clock

    def asks(self, tool: Tool) -> bool:
        return tool.needs_approval()

    def refusal(self, tool: str, decision: Decision, who: str | None) -> str:
        return refusal(tool, decision, who)

    def waiting(self, run: Run, call: ToolCall) -> str:
        return f"approval of {call.name}"

    def check(self, run: Run, call: ToolCall) -> tuple[Decision, str | None]:
        entries = APPROVALS.use(run.state.context)
        entry = entries.get(call.id) or self._ask(run, call, entries)
        if not binds(entry, call):  # an id reused for another call: what was decided was not this
            return Decision.DENIED, "nobody: the decision on record was for another call with this id"
        if entry["status"] != Decision.PENDING:
            return Decision(entry["status"]), entry["by"]
        now = self.clock()
        if now >= entry["expires_at"]:
            return self._settle(run, call, entry, Decision.EXPIRED, None)
        decision, who = self.approver.decide(self.request(run, call, entry))
        if decision is Decision.PENDING:
            return decision, None
        return self._settle(run, call, entry, decision, who)

    def request(self, run: Run, call: ToolCall, entry: ApprovalEntry) -> ApprovalRequest:
        from ..tools.registry import parse_arguments

        try:
            shown = summarize(parse_arguments(call.arguments))
        except Exception:  # arguments that are not JSON are shown as the text they are
            shown = call.arguments
        return ApprovalRequest(
            run.state.run_id, call.id, call.name, shown, entry["arguments_sha256"], entry["expires_at"]
        )

    def _ask(self, run: Run, call: ToolCall, entries: dict[str, ApprovalEntry]) -> ApprovalEntry:
        now = self.clock()
        entry: ApprovalEntry = {
            "tool": call.name,
            "arguments_sha256": arguments_hash(call.arguments),
            "requested_at": now,
            "expires_at": now + self.timeout,
            "status": Decision.PENDING,
            "by": None,
            "decided_at": None,
        }
        entries[call.id] = entry
        run.record.event(
            ApprovalRequested(
                call=call.id,
                tool=call.name,
                arguments_sha256=entry["arguments_sha256"],
                expires_at=entry["expires_at"],
                turn=run.state.turn,
            )
        )
        return entry

    def _settle(
        self, run: Run, call: ToolCall, entry: ApprovalEntry, decision: Decision, who: str | None
    ) -> tuple[Decision, str | None]:
        entry["status"], entry["by"], entry["decided_at"] = str(decision), who, self.clock()
        run.record.event(
            ApprovalDecided(
                call=call.id,
                tool=call.name,
                decision=str(decision),
                by=who,
                arguments_sha256=entry["arguments_sha256"],
                turn=run.state.turn,
            )
        )
        return decision, who


def refusal(tool: str, decision: Decision, who: str | None) -> str:
    """What the model is told when the call does not run."""
    if decision is Decision.EXPIRED:
        return f"not run: the approval of this {tool} call expired before anyone decided. Do not retry it unasked."
    by = f" by {who}" if who else ""
    return f"not run: this {tool} call was denied{by}. Do not retry it; say so in your answer or ask what to do."
