"""An event the webhook refused by its workflow's access rules: no run starts; the person is told why, privately
(the webhook has no chat credentials, the worker has)."""

from __future__ import annotations

from ..inbound import run_id_for
from ..triggers.queued import RefusedMessage
from .access import REFUSED, refuse
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(RefusedMessage)
def on_refused(delivery: Delivery[RefusedMessage]) -> Outcome:
    event, run_id = delivery.message.event, run_id_for(delivery.message.event)
    delivery.about(event, run_id)
    who = delivery.process.sources.of(event).requester(event)
    return refuse(delivery, event, run_id, REFUSED.format(reason=delivery.message.reason), who)
