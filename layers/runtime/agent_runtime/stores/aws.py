"""The production store: blobs in S3, items in DynamoDB. Clients are injected; none is created at import.

Table: partition key ``pk`` (S), sort key ``sk`` (S), attributes ``version`` (N), ``data`` (S, JSON) or
``blob`` (S, an S3 key for items over the inline limit: a claim check), ``expires_at`` (N, the TTL attribute).
S3 keys: ``<prefix><pk>/<sk>``, so a partition is one S3 prefix too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

from botocore.exceptions import ClientError

from .base import Item, Store
from .exceptions import StoreError, VersionConflictError

INLINE_LIMIT = 300_000  # DynamoDB items stop at 400 KB; larger documents go to S3


class AwsStore(Store):
    def __init__(self, *, s3: Any, dynamodb: Any, bucket: str, table: str, prefix: str = "") -> None:
        self.s3, self.dynamodb, self.bucket, self.table, self.prefix = s3, dynamodb, bucket, table, prefix

    def _key(self, partition: str, name: str) -> str:
        return f"{self.prefix}{partition}/{name}"

    def put_blob(self, partition: str, name: str, data: bytes) -> None:
        self._call(self.s3.put_object, Bucket=self.bucket, Key=self._key(partition, name), Body=data)

    def read_blob(self, partition: str, name: str, start: int, end: int) -> bytes:
        if end <= start:
            return b""
        response = self._call(
            self.s3.get_object, Bucket=self.bucket, Key=self._key(partition, name), Range=f"bytes={start}-{end - 1}"
        )
        return bytes(response["Body"].read())

    def iter_blob(self, partition: str, name: str, start: int, end: int, chunk: int) -> Iterator[bytes]:
        """One ranged GET, read as it arrives: a 100 MB scan costs one request, at the transfer's pace."""
        if end <= start:
            return
        response = self._call(
            self.s3.get_object, Bucket=self.bucket, Key=self._key(partition, name), Range=f"bytes={start}-{end - 1}"
        )
        body = response["Body"]
        try:
            while True:
                try:
                    piece = body.read(chunk)
                except Exception as error:  # a dropped connection mid-stream (botocore's streaming errors)
                    raise StoreError(f"S3 read {partition}/{name}: {type(error).__name__}: {error}") from error
                if not piece:
                    return
                yield bytes(piece)
        finally:
            body.close()

    def blob_size(self, partition: str, name: str) -> int | None:
        try:
            return int(self.s3.head_object(Bucket=self.bucket, Key=self._key(partition, name))["ContentLength"])
        except ClientError as error:
            if error.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
                return None
            raise StoreError(f"S3 head {partition}/{name}: {error}") from error

    def get_item(self, partition: str, name: str) -> Item | None:
        response = self._call(
            self.dynamodb.get_item,
            TableName=self.table,
            Key={"pk": {"S": partition}, "sk": {"S": name}},
            ConsistentRead=True,
        )
        raw = response.get("Item")
        return None if raw is None else self._parsed(partition, raw)

    def _parsed(self, partition: str, raw: dict[str, Any]) -> Item | None:
        """A DynamoDB item as the store's Item (its claim-checked body read from S3); None once it has expired."""
        name = raw["sk"]["S"]
        expires = raw.get("expires_at")
        if expires and float(expires["N"]) < time.time():  # DynamoDB deletes expired items lazily
            return None
        if "blob" in raw:
            body = self._call(self.s3.get_object, Bucket=self.bucket, Key=raw["blob"]["S"])["Body"].read()
        else:
            body = raw["data"]["S"]
        data = _document(body)
        if data is None:
            raise StoreError(f"cannot read item {name!r} of {partition!r}: not a JSON object")
        return Item(data, int(raw["version"]["N"]))

    def put_item(
        self, partition: str, name: str, data: dict[str, Any], *, expected_version: int | None, ttl: int | None = None
    ) -> int:
        version = (expected_version or 0) + 1
        body = json.dumps(data, ensure_ascii=False)
        item: dict[str, Any] = {"pk": {"S": partition}, "sk": {"S": name}, "version": {"N": str(version)}}
        if len(body.encode("utf-8")) > INLINE_LIMIT:
            key = self._key(partition, f"{name}.v{version}.json")
            self._call(self.s3.put_object, Bucket=self.bucket, Key=key, Body=body.encode("utf-8"))
            item["blob"] = {"S": key}
        else:
            item["data"] = {"S": body}
        if ttl:
            item["expires_at"] = {"N": str(int(time.time() + ttl))}
        condition = (
            {"ConditionExpression": "attribute_not_exists(pk)"}
            if expected_version is None
            else {
                "ConditionExpression": "version = :v",
                "ExpressionAttributeValues": {":v": {"N": str(expected_version)}},
            }
        )
        try:
            self.dynamodb.put_item(TableName=self.table, Item=item, **condition)
        except ClientError as error:
            if error.response["Error"]["Code"] == "ConditionalCheckFailedException":
                raise VersionConflictError(
                    f"{partition}/{name}: expected version {expected_version}, someone wrote first"
                ) from None
            raise StoreError(f"DynamoDB put {partition}/{name}: {error}") from error
        return version

    def list_items(self, partition: str, prefix: str = "") -> list[str]:
        names: list[str] = []
        values = {":pk": {"S": partition}} | ({":prefix": {"S": prefix}} if prefix else {})
        kwargs: dict[str, Any] = {
            "TableName": self.table,
            # DynamoDB rejects begins_with on an empty string
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)" if prefix else "pk = :pk",
            "ExpressionAttributeValues": values,
            "ProjectionExpression": "sk",
        }
        while True:
            response = self._call(self.dynamodb.query, **kwargs)
            names += [row["sk"]["S"] for row in response.get("Items", [])]
            if "LastEvaluatedKey" not in response:
                return sorted(names)
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def items(self, partition: str, *, skip: tuple[str, ...] = ()) -> dict[str, Item]:
        """One Query of the partition (paged), consistent; what ``skip`` names is filtered out by DynamoDB (never
        sent), claim-checked items are fetched from S3 as they are found."""
        values: dict[str, Any] = {":pk": {"S": partition}}
        kwargs: dict[str, Any] = {"TableName": self.table, "KeyConditionExpression": "pk = :pk", "ConsistentRead": True}
        if skip:
            values |= {f":skip{i}": {"S": prefix} for i, prefix in enumerate(skip)}
            kwargs["FilterExpression"] = " AND ".join(f"NOT begins_with(sk, :skip{i})" for i in range(len(skip)))
        kwargs["ExpressionAttributeValues"] = values
        found: dict[str, Item] = {}
        while True:
            response = self._call(self.dynamodb.query, **kwargs)
            for raw in response.get("Items", []):
                item = self._parsed(partition, raw)
                if item is not None:
                    found[raw["sk"]["S"]] = item
            if "LastEvaluatedKey" not in response:
                return found
            kwargs["ExclusiveStartKey"] = response["LastEvaluatedKey"]

    def delete_partition(self, partition: str) -> int:
        count = 0
        for name in self.list_items(partition):
            self._call(self.dynamodb.delete_item, TableName=self.table, Key={"pk": {"S": partition}, "sk": {"S": name}})
            count += 1
        paginator = self.s3.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=self.bucket, Prefix=self._key(partition, "")):
            objects = [{"Key": obj["Key"]} for obj in page.get("Contents", [])]
            if objects:
                self._call(self.s3.delete_objects, Bucket=self.bucket, Delete={"Objects": objects})
                count += len(objects)
        return count

    def _call(self, method: Any, **kwargs: Any) -> Any:
        try:
            return method(**kwargs)
        except ClientError as error:
            raise StoreError(f"{method.__name__}: {error}") from error


def _document(body: str | bytes) -> dict[str, Any] | None:
    """An item's JSON object; None when it is not one (written by hand, cut short)."""
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None
