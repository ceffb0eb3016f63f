"""The sandbox as a Lambda function (``functions/sandbox``), invoked synchronously with boto3."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .client import SandboxClient, never
from .exceptions import SandboxError


class LambdaSandbox(SandboxClient):
    """``client`` is a boto3 Lambda client; made on first use when not injected (no clients at import time)."""

    def __init__(self, function_name: str, *, client: Any = None) -> None:
        self.function_name = function_name
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            import boto3
            from botocore.config import Config

            # The read timeout must outlast the longest call (300 s limit + start-up); retries would run code twice.
            config = Config(read_timeout=330, connect_timeout=5, retries={"max_attempts": 1, "mode": "standard"})
            self._client = boto3.client("lambda", config=config)
        return self._client

    def close(self) -> None:
        """Drop pooled connections (after a SnapStart restore they are dead); the client stays usable."""
        if self._client is not None:
            self._client.close()

    def _invoke(self, event: dict[str, Any], timeout: float, cancelled: Callable[[], bool] = never) -> Any:
        # A synchronous invocation cannot be called back: a stopped run's call runs to its end (its time limit).
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.invoke(FunctionName=self.function_name, Payload=json.dumps(event).encode())
            payload = response["Payload"].read()
        except (BotoCoreError, ClientError) as error:
            raise SandboxError(f"cannot invoke the sandbox function {self.function_name}: {error}") from None
        try:
            reply = json.loads(payload)
        except ValueError:
            raise SandboxError(f"the sandbox function returned non-JSON: {payload[:200]!r}") from None
        if response.get("FunctionError"):
            message = reply.get("errorMessage") if isinstance(reply, dict) else reply
            raise SandboxError(f"the sandbox function failed ({response['FunctionError']}): {message}")
        return reply
