"""Which turn each of a run's assistant messages was, as its record numbers turns: the transcript puts a turn's
cost and the engine's events beside the words it made.

A thread's turns number on across its runs (a run's state keeps the count: its second run's first turn is the one
after the first run's last), and the checkpoint of a thread's later run holds the earlier runs' messages too. So
counting the history's assistant messages from 1 is right only while every turn left one message: a model call
closed by a stop, a script's ``ask`` (its own request, not the run's history) or a compaction that dropped early
messages leave none, and from there every cost and event would sit one turn off. Instead the run's own messages
are anchored where the record says — a message's tool calls by their ids, the final answer at the run's last turn
that asked the model — and the others count on from the nearest anchor, one turn each (an earlier run's turns,
which its own record, not this one, numbers).
"""

from __future__ import annotations

from collections.abc import Sequence

from .. import messages as msgs
from ..views.run import StoredRun


def numbered(run: StoredRun, history: Sequence[msgs.Message]) -> list[int]:
    """The turn of each assistant message of ``history``, in order: increasing, from 1 at the least."""
    said = [message for message in history if message["role"] == "assistant"]
    anchors = _anchors(run, said)
    if not any(anchors):
        return list(range(1, len(said) + 1))
    first = next(i for i, turn in enumerate(anchors) if turn)
    found: list[int] = []
    for i, turn in enumerate(anchors):
        if turn and (not found or turn > found[-1]):
            found.append(turn)
        else:  # counted on from the anchor before it; before the first anchor, back from it
            found.append(found[-1] + 1 if found else anchors[first] - (first - i))
    if found[0] < 1:  # more messages before the anchor than turns (a record that does not fit): as they come
        return list(range(1, len(said) + 1))
    return found


def _anchors(run: StoredRun, said: Sequence[msgs.Message]) -> list[int]:
    """The record's turn of each assistant message it can place (0: it cannot)."""
    by_call = {call.id: call.turn for call in run.tool_calls if call.id and call.turn > 0}
    anchors = [
        next((by_call[c.get("id", "")] for c in message.get("tool_calls") or [] if c.get("id", "") in by_call), 0)
        for message in said
    ]
    asked = [call.turn for call in run.model_calls if call.purpose != "compaction" and call.outcome != "failed"]
    if said and not said[-1].get("tool_calls") and asked and max(asked) > max(anchors, default=0):
        anchors[-1] = max(asked)  # the answer: the run's last turn that asked the model
    return anchors
