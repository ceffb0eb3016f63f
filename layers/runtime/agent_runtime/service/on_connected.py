"""A person answered a run's request that they connect a provider (the webhook's OAuth callback): the run waiting
for it goes on — the call runs with their token, or is answered "declined"."""

from __future__ import annotations

from ..identity import CONNECTIONS
from ..triggers.queued import ConnectedMessage
from . import turn
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(ConnectedMessage)
def on_connected(delivery: Delivery[ConnectedMessage]) -> Outcome:
    message = delivery.message
    event = delivery.run_event(message.run_id, click=True)
    if event is None:
        return Outcome.IGNORED
    if delivery.runs.reply_state(message.run_id) is not None:
        # it ended meanwhile (expired, stopped): nothing waits
        return turn.answered_already(delivery, event, message.run_id)
    checkpoint = delivery.runs.load_checkpoint(message.run_id)
    entries = CONNECTIONS.get(checkpoint[0].context).values() if checkpoint is not None else ()
    if not any(e["provider"] == message.provider and e["status"] == "pending" for e in entries):
        return Outcome.DUPLICATE  # delivered again after the run went on, or for a run that never asked
    return turn.run_turn(delivery, event, message.run_id, continuation=False)
