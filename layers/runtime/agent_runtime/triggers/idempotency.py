"""Powertools idempotency for webhooks: DynamoDB in AWS (the runtime's table), any runtime store locally."""

from __future__ import annotations

import hashlib
import time
from typing import Any

from aws_lambda_powertools.utilities.idempotency import DynamoDBPersistenceLayer
from aws_lambda_powertools.utilities.idempotency.exceptions import (
    IdempotencyItemAlreadyExistsError,
    IdempotencyItemNotFoundError,
)
from aws_lambda_powertools.utilities.idempotency.persistence.base import BasePersistenceLayer
from aws_lambda_powertools.utilities.idempotency.persistence.datarecord import DataRecord

from ..stores import Store, VersionConflictError

PARTITION = "idempotency"


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
