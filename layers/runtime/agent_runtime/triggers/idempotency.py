"""Powertools idempotency for webhooks: what is queued once per delivery (``Once``), its records in DynamoDB in
AWS (the runtime's table), in any runtime store locally."""

from __future__ import annotations

import copy
import hashlib
import time
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyAlreadyInProgressError,
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
    IdempotencyPersistenceLayerError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from ..stores import Store, VersionConflictError
from .exceptions import Unavailable
from .queue import EventQueue, passing

PARTITION = "idempotency"
DEDUP_SECONDS = 24 * 3600  # Slack retries for ~5 minutes, JIRA for ~30; a day covers late replays too


class Once:
    """Messages queued once per key: a record per key, kept a day, where SQS FIFO's deduplication forgets a key after
    5 minutes (and Slack's last retry comes about 5 minutes after its first). ``config``'s in-progress records
    expire with the invocation that made them (``register_lambda_context``)."""

    def __init__(self, queue: EventQueue, persistence: BasePersistenceLayer, log: Logger) -> None:
        self.queue, self.log = queue, log
        self.config = IdempotencyConfig(
            event_key_jmespath="dedup_key", expires_after_seconds=DEDUP_SECONDS, raise_on_no_idempotency_key=True
        )
        once = idempotent_function(data_keyword_argument="record", persistence_store=persistence, config=self.config)
        self._once = once(self._send)
        # A delivery keyed twice (by what was signed, then by its own key) is this record around that one.
        # Powertools configures a persistence layer once, for one function: the outer record needs its own.
        twice = idempotent_function(
            data_keyword_argument="record", persistence_store=copy.copy(persistence), config=self.config
        )
        self._twice = twice(self._signed)

    def send(self, body: dict[str, Any], *, group: str, dedup: str, signed: str | None = None) -> bool:
        """Whether ``body`` was queued now (False: it was before). ``signed``: what the sender signed, when ``dedup``
        is not (either record already there makes it a duplicate). :class:`Unavailable` when the queue or the
        records are down, or the same key is being queued by another request: nothing is queued, nor recorded."""
        sent: list[str] = []
        try:
            if signed is None:
                self._once(record={"dedup_key": dedup}, body=body, group=group, sent=sent)
            else:
                self._twice(record={"dedup_key": signed}, body=body, group=group, sent=sent, dedup=dedup)
        except IdempotencyAlreadyInProgressError:  # its answer is not known yet: "duplicate" would lose it if it fails
            raise Unavailable("the same delivery is being queued now") from None
        except IdempotencyPersistenceLayerError as error:
            if sent:  # queued: only its record is not completed (it expires as in progress; SQS drops a retry)
                self.log.warning("queued, but its record was not completed", extra={"error": str(error)})
                return True
            if not passing(error.__cause__ or error):
                raise
            raise Unavailable("the idempotency store is unavailable") from error
        return bool(sent)

    def _send(self, record: dict[str, str], body: dict[str, Any], group: str, sent: list[str]) -> dict[str, str]:
        sent.append(self.queue.send(body, group=group, dedup=record["dedup_key"]))
        return {"message_id": sent[-1]}

    def _signed(
        self, record: dict[str, str], body: dict[str, Any], group: str, sent: list[str], dedup: str
    ) -> dict[str, str]:
        return self._once(record={"dedup_key": dedup}, body=body, group=group, sent=sent)  # type: ignore[no-any-return]


def dynamodb_layer(table: str, client: Any = None) -> DynamoDBPersistenceLayer:
    """Records in the runtime's own table (pk/sk, ``expires_at`` TTL), next to threads and runs."""
    return DynamoDBPersistenceLayer(
        table_name=table, key_attr="pk", sort_key_attr="sk", expiry_attr="expires_at", boto3_client=client
    )


class StorePersistenceLayer(BasePersistenceLayer):
    """The same records in a runtime :class:`Store` (the local directory store for ``serve`` and tests)."""

    def __init__(self, store: Store) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.store = store

    def _name(self, key: str) -> str:
        return hashlib.sha256(key.encode()).hexdigest()

    def _get_record(self, idempotency_key: str) -> DataRecord:
        item = self.store.get_item(PARTITION, self._name(idempotency_key))
        if item is None:
            raise IdempotencyItemNotFoundError
        return DataRecord(idempotency_key=idempotency_key, **item.data)

    def _put_record(self, data_record: DataRecord) -> None:
        name = self._name(data_record.idempotency_key)
        current = self.store.get_item(PARTITION, name)
        if current is not None and not _replaceable(current.data):
            raise IdempotencyItemAlreadyExistsError(old_data_record=self._get_record(data_record.idempotency_key))
        try:
            self.store.put_item(
                PARTITION, name, _fields(data_record), expected_version=current.version if current else None
            )
        except VersionConflictError:
            raise IdempotencyItemAlreadyExistsError from None

    def _update_record(self, data_record: DataRecord) -> None:
        self.store.put_latest(PARTITION, self._name(data_record.idempotency_key), _fields(data_record))

    def _delete_record(self, data_record: DataRecord) -> None:
        # Stores delete whole partitions only; an expired record is as good as a deleted one. Powertools hands
        # over a record without a status here (it was reading ``.status`` that raised, and left the record in
        # progress: a failed enqueue then made the sender's retry a "duplicate", and the event was lost).
        expired = {"status": "EXPIRED", "expiry_timestamp": 0, "in_progress_expiry_timestamp": None}
        self.store.put_latest(
            PARTITION, self._name(data_record.idempotency_key), {**expired, "response_data": "", "payload_hash": ""}
        )


def _fields(record: DataRecord) -> dict[str, Any]:
    return {
        "status": record.status,
        "expiry_timestamp": record.expiry_timestamp,
        "in_progress_expiry_timestamp": record.in_progress_expiry_timestamp,
        "response_data": record.response_data,
        "payload_hash": record.payload_hash,
    }


def _replaceable(data: dict[str, Any]) -> bool:
    now = time.time()
    if (data.get("expiry_timestamp") or 0) < now:
        return True
    in_progress = data.get("in_progress_expiry_timestamp")
    return data.get("status") == "INPROGRESS" and in_progress is not None and in_progress < now * 1000
