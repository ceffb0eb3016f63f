"""A message whose answer Slack could not take (``Unreachable``: refused, DNS, a timeout) is delivered again soon,
not after the queue's whole visibility timeout (90 minutes on the stack, with every later message of its thread
waiting behind it in the FIFO group): after a backoff by how many times it was received, 30 s doubled each time, at
most 15 minutes. Any other failure keeps the queue's own timeout and, in the end, the dead-letter queue: a bug is
not retried sooner.

On AWS the worker shortens the message's visibility (SQS ChangeMessageVisibility) and reports it failed; under
``agent-runtime serve`` the lanes hold its group for the backoff and hand it over again (``lanes.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from aws_lambda_powertools import Logger

from ..chat.exceptions import Unreachable
from ..triggers.queue import EventQueue, SqsQueue

FIRST_SECONDS = 30.0  # the first redelivery's wait; each one after waits twice the last
CAP_SECONDS = 900.0  # 15 minutes (serve, with no receive limit, tries a long outage four times an hour)
_MAX_DOUBLINGS = 16  # 30 s x 2^16 is far past the cap: no float overflow for a count in the thousands


def backoff(received: int, first: float = FIRST_SECONDS) -> float:
    """The wait before the ``received``-th delivery's next: ``first`` x 2^(received-1), at most :data:`CAP_SECONDS`
    (a count below 1, as a missing attribute reads, is the first)."""
    doublings = min(max(received, 1) - 1, _MAX_DOUBLINGS)
    return float(min(CAP_SECONDS, first * 2**doublings))


@contextmanager
def soon_when_unreachable(
    queue: EventQueue | None, receipt: str, received: int, log: Logger, first: float = FIRST_SECONDS
) -> Iterator[None]:
    """Around one SQS record's handling: an ``Unreachable`` makes the message visible again after :func:`backoff`,
    then goes on up (the batch reports the message failed, so it is not deleted). Should SQS refuse the change too,
    the message keeps the queue's timeout: said, and the first error stays the one raised."""
    try:
        yield
    except Unreachable:
        seconds = backoff(received, first)
        if not isinstance(queue, SqsQueue):  # no SQS queue to change (a worker without AGENT_QUEUE_URL)
            raise
        try:
            queue.visible_in(receipt, int(seconds))
        except Exception as error:  # any SQS failure: the long timeout, said
            log.warning("Slack is unreachable; the queue's timeout applies", extra={"why": type(error).__name__})
        else:
            log.warning("Slack is unreachable; the message is delivered again soon", extra={"in_seconds": seconds})
        raise
