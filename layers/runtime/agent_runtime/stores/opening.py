"""Which store a process uses: S3 + DynamoDB when a table and a bucket are configured, else the local store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .base import Store


def open_store(*, table: str | None, bucket: str | None, state_dir: Path, session: Any = None) -> Store:
    """The AWS store on ``session``'s clients (a new boto3 session when none), or the local one in ``state_dir``."""
    if table and bucket:
        import boto3

        from .aws import AwsStore

        session = session or boto3.session.Session()
        return AwsStore(s3=session.client("s3"), dynamodb=session.client("dynamodb"), bucket=bucket, table=table)
    from .local import LocalStore

    return LocalStore(state_dir)
