"""The queue between the webhook and the worker: SQS (FIFO, one message group per thread) or in-process.

Messages over :data:`CLAIM_CHECK_BYTES` go to the store and the queue carries a pointer (claim check): a Slack
message with a pasted log can pass SQS's size limit.
"""

from __future__ import annotations

import errno
import hashlib
import json
import queue as stdlib_queue
import re
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from ..stores import Store
from .exceptions import Unavailable

CLAIM_CHECK_BYTES = 200 * 1024
DISK_OUTAGES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO})  # the local store's: a later retry may pass
CLAIMS = "claims"  # store partition of claim-checked bodies
_GROUP = re.compile(r"[\x21-\x7e]{1,128}")  # SQS: a MessageGroupId is alphanumeric and punctuation
_UNSAFE = re.compile(r"[^\x21-\x7e]")


class EventQueue(ABC):
    """``store`` (or ``store_factory``, made on first use) keeps claim-checked bodies."""

    _store: Store | None = None
    store_factory: Callable[[], Store] | None = None

    @property
    def store(self) -> Store | None:
        if self._store is None and self.store_factory is not None:
            self._store = self.store_factory()
        return self._store

    @store.setter
    def store(self, value: Store | None) -> None:
        self._store = value

    def send(self, message: dict[str, Any], *, group: str, dedup: str) -> str:
        """Enqueue ``message``; ``group`` orders messages (one thread at a time), ``dedup`` drops repeats.
        :class:`Unavailable` when the queue (or the store of a claim-checked body) is down: nothing was sent."""
        body = json.dumps(message, ensure_ascii=False)
        store = self.store if len(body.encode()) > CLAIM_CHECK_BYTES else None
        if store is not None:
            key = hashlib.sha256(body.encode()).hexdigest()
            with down_as("the store"):
                store.put_blob(CLAIMS, key, body.encode())
            body = json.dumps({"type": "claim", "key": key})
        with down_as("the queue"):
            return self._send(body, group=group, dedup=dedup)

    @abstractmethod
    def _send(self, body: str, *, group: str, dedup: str) -> str: ...


def decode(body: str, store: Store | None) -> dict[str, Any]:
    """A message body back to the message, fetching claim-checked bodies from the store."""
    message = json.loads(body)
    if isinstance(message, dict) and message.get("type") == "claim":
        if store is None:
            raise ValueError("a claim-checked message needs the store")
        key = str(message["key"])
        size = store.blob_size(CLAIMS, key)
        if size is None:
            raise ValueError(f"claim-checked message {key} is missing from the store")
        message = json.loads(store.read_blob(CLAIMS, key, 0, size))
    if not isinstance(message, dict) or "type" not in message:
        raise ValueError("not a queue message (no 'type')")
    return message


class SqsQueue(EventQueue):
    def __init__(
        self, sqs: Any, url: str, *, store: Store | None = None, store_factory: Callable[[], Store] | None = None
    ) -> None:
        self.sqs, self.url, self.store, self.store_factory = sqs, url, store, store_factory
        self.fifo = url.endswith(".fifo")

    def _send(self, body: str, *, group: str, dedup: str) -> str:
        extra = {"MessageGroupId": group_id(group), "MessageDeduplicationId": _dedup_id(dedup)} if self.fifo else {}
        return str(self.sqs.send_message(QueueUrl=self.url, MessageBody=body, **extra)["MessageId"])

    def visible_in(self, receipt: str, seconds: int) -> None:
        """The received message (its ``receipt`` handle) delivered again ``seconds`` from now, whatever the queue's
        visibility timeout."""
        self.sqs.change_message_visibility(QueueUrl=self.url, ReceiptHandle=receipt, VisibilityTimeout=seconds)


class Queued(str):
    """A body as the local queue holds it: the text, with its message group (``group``), as SQS hands a FIFO
    message's MessageGroupId with it. A str still: whoever reads ``messages`` reads bodies."""

    group: str
    received = 0  # how many times a lane took it, as SQS counts a message's receives (``service/again.py``)

    def __new__(cls, body: str, group: str) -> Queued:
        made = super().__new__(cls, body)
        made.group = group
        return made


class LocalQueue(EventQueue):
    """For ``agent-runtime serve`` and tests: messages wait in memory for in-process workers, each a
    :class:`Queued` (its group with it: serve works a group's messages in order, different groups at once).
    ``apart``: the message groups (by prefix) whose messages wait in ``beside`` instead, for a worker of their
    own — as SQS FIFO hands another group to another Lambda invocation while one group's message is worked on."""

    def __init__(self, store: Store | None = None, *, apart: tuple[str, ...] = ()) -> None:
        self.store, self.apart = store, apart
        self.messages: stdlib_queue.Queue[str] = stdlib_queue.Queue()
        self.beside: stdlib_queue.Queue[str] = stdlib_queue.Queue()
        self._seen: set[str] = set()

    def _send(self, body: str, *, group: str, dedup: str) -> str:
        if dedup in self._seen:  # what a FIFO queue's deduplication does
            return "duplicate"
        self._seen.add(dedup)
        (self.beside if self.apart and group.startswith(self.apart) else self.messages).put(Queued(body, group))
        return _dedup_id(dedup)


@contextmanager
def down_as(what: str) -> Iterator[None]:
    """An outage of ``what`` raised as :class:`Unavailable` (the sender retries); any other error as it is: a bug or
    a misconfiguration (access denied, no such queue) is Lambda's 500, which the function's error alarm counts."""
    try:
        yield
    except Unavailable:
        raise
    except Exception as error:
        if not passing(error):
            raise
        raise Unavailable(f"{what} is unavailable") from error


def passing(error: BaseException) -> bool:
    """An outage a later retry may not meet: the connection refused or timed out, throttled, a 5xx — what botocore's
    standard retry mode retries (its own retries ran out by now), or a socket's error; for serve's local store, a
    disk that is full or failing (a bug's errors, a path that is no directory, stay errors)."""
    if isinstance(error, ConnectionError | TimeoutError):
        return True
    if isinstance(error, OSError) and error.errno in DISK_OUTAGES:
        return True
    if "botocore" not in sys.modules:  # no AWS client made: no botocore error either
        return False
    from botocore.exceptions import ClientError
    from botocore.retries import standard

    answered = error.response if isinstance(error, ClientError) else None
    if ((answered or {}).get("ResponseMetadata") or {}).get("HTTPStatusCode", 0) >= 500:
        return True
    context = standard.RetryContext(1, parsed_response=answered, caught_exception=None if answered else error)
    checks = (standard.TransientRetryableChecker(), standard.ThrottledRetryableChecker())
    return any(check.is_retryable(context) for check in checks)


def group_id(group: str) -> str:
    """The group as SQS takes it: as it is when SQS would (1-128 printable ASCII characters), else its digest
    after its first characters (a /runs thread id may have 200; one group per thread all the same)."""
    if _GROUP.fullmatch(group):
        return group
    return f"{_UNSAFE.sub('-', group[:40])}~{hashlib.sha256(group.encode('utf-8', 'surrogatepass')).hexdigest()}"


def _dedup_id(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:64]  # SQS: at most 128 characters
