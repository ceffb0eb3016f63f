"""A person wrote "disconnect <provider>" to the app (``sources.slack_mention``): their connection to it is revoked
at the provider and forgotten here, and they are told in their direct conversation with the app — where they were
asked to connect. No run starts; their next run that needs the provider asks them again."""

from __future__ import annotations

from ..chat.exceptions import ReplyError
from ..triggers.queued import DisconnectMessage
from .connections import revoke
from .handlers import Delivery, handles
from .outcome import Outcome


@handles(DisconnectMessage)
def on_disconnect(delivery: Delivery[DisconnectMessage]) -> Outcome:
    process, message = delivery.process, delivery.message
    event = message.event
    process.log.set_correlation_id(event.correlation_id)
    if process.connect is None:
        process.log.info("disconnect: connections are not set up here")
        return Outcome.IGNORED
    person = process.sources.of(event).requester(event).person
    text = revoke(process.connect, person, message.provider, process.workflow, process.secrets)
    slack = process.replies.slack
    try:
        if slack is not None:
            slack.direct(event.user, text)
    except ReplyError as error:
        process.log.warning("the disconnection could not be told", extra={"error": str(error)})
    process.log.info("disconnected", extra={"person": person, "provider": message.provider})
    return Outcome.NOTED
