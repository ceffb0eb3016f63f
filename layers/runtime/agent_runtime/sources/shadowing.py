"""Which workflow the app's direct messages go to when several take them.

Only one does: the webhook routes a direct message (and the pane opened, whose suggested prompts it offers) to
the first workflow its routing picks, so every other one's ``direct_messages`` and ``suggested_prompts`` are never
used. ``workflows validate`` warns each of those, naming the one that takes them, as the webhook's own routing
(``sources.BUILTIN``) decides: not a copy of its rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..inbound import TriggerEvent

if TYPE_CHECKING:
    from ..workflows import Workflow

KEY = "triggers.slack.direct_messages"


def direct_messages_shadowed(workflow: Workflow, folder: Sequence[Workflow]) -> list[str]:
    """The warning for ``workflow`` when it takes direct messages that another of ``folder`` (the workflows
    deployed beside it) gets first; none when it gets them, or takes none."""
    rule = workflow.triggers.slack
    if rule is None or not rule.direct_messages:
        return []
    from . import BUILTIN

    together = [workflow, *(other for other in folder if other.name != workflow.name)]
    message = _direct_message()
    winner = BUILTIN.route(message, together)
    if winner is None or winner == workflow.name:
        return []
    taking = sorted(w.name for w in together if BUILTIN.of(message).matches(w, message))
    unused = "direct_messages and suggested_prompts are" if rule.suggested_prompts else "direct_messages is"
    return [
        f"{KEY}: the app's direct messages (and its pane's suggested prompts) go to {winner!r}, the first by name "
        f"of the workflows taking them ({', '.join(taking)}): this workflow's {unused} never used; set "
        f"direct_messages: false in {winner!r} to give them to this one"
    ]


def _direct_message() -> TriggerEvent:
    """A direct message to the app, as the webhook routes one (only its source, kind and facts are read)."""
    return TriggerEvent(
        source="slack",
        kind="message",
        dedup_key="validate",
        text="",
        user="",
        thread_id="",
        correlation_id="",
        attributes={"channel": "D0", "direct_message": True, "team": "T0", "ts": "0"},
    )
