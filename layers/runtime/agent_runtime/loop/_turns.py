"""A model's reply shaped before it joins the history: call ids made unique, calls that must not run named with
why (cut off at the output limit, arguments that are not JSON), turns of only such calls counted (a model that keeps
writing them is stopped), and which limit cut an answer short.

The one namespace of ids that outlive a turn: approvals (``approvals.gate``) and the mutating-call journal
(``stores.hook``) key their entries by call id and keep them for the thread's life, and every call id is minted
here — the model's (kept, or renamed past every id in use: ``unique_call_ids``) and the runtime's own (a script's
step: ``call_id_for``, a digest of the run and the step) — so no id is ever given to two calls of a thread, whatever
feature made them and in whichever turn.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import replace

from ..approvals.gate import APPROVALS
from ..errors import RunError, ToolError
from ..models import ModelResponse, ToolCall
from ..record import RunState
from ..state import Slot
from ..steps import Run
from ..stores.hook import JOURNAL
from ..tools.registry import parse_arguments

# Turns in a row whose every call could not run (cut off, arguments not JSON): such calls do not count against
# the cap, so this bounds a model that keeps writing calls it cannot finish.
MAX_UNRUN_TURNS = 3
TRUNCATED = "the answer was cut off at the output limit (model.max_output_tokens)"
CUT_BY_WINDOW = (
    "the answer was cut off at the output limit of {cap:,} tokens: what the server's smaller window leaves for "
    "an answer (model.max_output_tokens is {configured:,})"
)
CUT_BY_SPEND = (
    "the answer was cut off at the output limit of {cap:,} tokens: what the spend limit still allowed for a reply "
    "(model.max_output_tokens is {configured:,}; raise limits.max_cost to allow more)"
)
CUT_BY_SERVER = (
    "the answer was cut off by the server after {completion:,} tokens, below the output limit of {cap:,}: its "
    "context window was full ({total:,} tokens with the prompt) or it has an output limit of its own "
    "(llama.cpp's -n)"
)
CUT_OFF = (
    "not run: your reply was cut off at the output limit while writing tool calls; "
    "call again, with shorter arguments or fewer calls at once"
)


class UnrunnableCallsError(RunError):
    """The model's tool calls could not run several turns in a row (cut off, or arguments that are not JSON)."""


# Consecutive turns none of whose calls could run (kept with the state: a resumed run goes on counting).
UNRUN_TURNS: Slot[int] = Slot("unrun_turns", int, owner=__name__)
# Every tool-call id issued in this run or thread (ids must never repeat: approvals and the journal key on them).
ISSUED: Slot[list[str]] = Slot("call_ids", list, owner=__name__)
MAX_ISSUED = 5_000


def count_unrun(run: Run, none_ran: bool, refused: dict[str, str]) -> None:
    """Unrunnable calls are answered but not counted; a model that writes only those, turn after turn, is
    stopped here (its history stays valid: every call has its answer)."""
    count = UNRUN_TURNS.get(run.state.context) + 1 if none_ran else 0
    if count == 0:
        UNRUN_TURNS.clear(run.state.context)
        return
    UNRUN_TURNS.set(run.state.context, count)
    if count >= MAX_UNRUN_TURNS:
        why = next(iter(refused.values()), "")
        raise UnrunnableCallsError(
            f"the model's tool calls could not run {count} turns in a row (last: {why.split(';')[0]})"
        )


def cut_off(response: ModelResponse, cap: int | None, configured: int, spend_cap: int | None = None) -> str:
    """Which limit cut the answer short: the workflow's, what the spend limit still allowed, the one a small
    server window leaves, or the server's own (fewer tokens than the cap allowed)."""
    usage = response.usage
    if usage is None or not cap or usage.completion_tokens >= cap * 0.9:
        if cap and spend_cap is not None and cap == spend_cap < configured:
            return CUT_BY_SPEND.format(cap=cap, configured=configured)
        if cap and cap < configured:
            return CUT_BY_WINDOW.format(cap=cap, configured=configured)
        return TRUNCATED
    total = usage.prompt_tokens + usage.completion_tokens
    return CUT_BY_SERVER.format(completion=usage.completion_tokens, cap=cap, total=total)


def storable(response: ModelResponse) -> tuple[ModelResponse, dict[str, str]]:
    """The response as the history keeps it, and the calls that must not run, with why.

    A turn cut off at the output limit (finish_reason "length") ran out mid-call: none of its calls run. Arguments
    that are not JSON are stored as ``{}``: servers that rebuild the prompt from the history (llama.cpp) must
    parse them, and one broken string would fail every later request of the thread."""
    refused: dict[str, str] = {}
    calls = []
    for call in response.tool_calls:
        try:
            parse_arguments(call.arguments)
            valid = True
        except ToolError as error:
            valid, why = False, str(error)
        if response.finish_reason == "length":
            refused[call.id] = CUT_OFF
        elif not valid:
            refused[call.id] = f"{why} (it was not run)"
        calls.append(call if valid else replace(call, arguments="{}"))
    stored = replace(response, tool_calls=tuple(calls)) if calls != list(response.tool_calls) else response
    return stored, refused


def issued(state: RunState) -> set[str]:
    """Every call id this run or thread has used: its history's, the recent ones compaction removed from it
    (servers reuse ``call_1`` from one turn to the next), and every key its approvals and journal keep — never
    bounded, so an id of theirs is never issued again however long the thread."""
    durable = set(APPROVALS.get(state.context)) | set(JOURNAL.get(state.context))
    history = {call["id"] for message in state.messages for call in message.get("tool_calls", [])}
    return set(ISSUED.get(state.context)) | durable | history


def call_id_for(state: RunState, seed: str, prefix: str = "script") -> str:
    """The id of a call the runtime makes itself (a script's step, named by ``seed``): a digest of the run and the
    seed, so each invocation of the run gives the step the id its approval and journal entry have, and another turn
    of the thread (another run id) never does."""
    return f"{prefix}-{hashlib.sha256(f'{state.run_id}|{seed}'.encode()).hexdigest()[:20]}"


def unique_call_ids(response: ModelResponse, turn: int, issued: set[str] | None = None) -> ModelResponse:
    """Call ids the model repeated, left empty or reused from an earlier turn are made unique before anything is
    stored: two calls with one id would leave one result orphaned, and an approval or a journal entry given to
    one call must never answer another."""
    seen: set[str] = set(issued or ())
    calls = []
    for index, call in enumerate(response.tool_calls):
        call_id, suffix = call.id or f"call_t{turn}_{index}", 1
        while call_id in seen:
            call_id, suffix = f"{call.id or 'call'}_{index}_{suffix}", suffix + 1
        seen.add(call_id)
        calls.append(call if call_id == call.id else replace(call, id=call_id))
    return response if calls == list(response.tool_calls) else replace(response, tool_calls=tuple(calls))


def remember_ids(state: RunState, calls: Sequence[ToolCall]) -> None:
    if calls:
        issued = ISSUED.use(state.context)
        issued.extend(call.id for call in calls)
        del issued[:-MAX_ISSUED]  # bounded: the ids approvals and the journal keep are issued() apart
