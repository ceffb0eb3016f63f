"""The sandbox client: one request shape for the local Node process and the Lambda function.

The request and reply are the sandbox function's own JSON (``functions/sandbox/lib/sandbox.mjs``); this module only
builds one and reads the other, so both transports behave the same.
"""

from __future__ import annotations

import base64
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .exceptions import SandboxError

STATUSES = ("ok", "error", "timeout", "memory_limit", "crashed", "invalid_request")
TRANSPORT_MARGIN_SECONDS = 15.0  # start-up and transfer on top of the code's own time limit


@dataclass(frozen=True, slots=True)
class SandboxFile:
    name: str
    data: bytes


@dataclass(frozen=True, slots=True)
class SandboxResult:
    """What one call produced. ``status`` is one of :data:`STATUSES`; only ``ok`` ran to the end."""

    status: str
    stdout: str = ""
    stderr: str = ""
    result: Any = None
    result_repr: bool = False  # ``result`` is the repr() of a value JSON cannot carry
    result_truncated: bool = False
    error: str | None = None
    traceback: str | None = None
    files: tuple[SandboxFile, ...] = ()
    files_skipped: tuple[Mapping[str, Any], ...] = ()
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    timings: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_reply(cls, reply: Any) -> SandboxResult:
        if not isinstance(reply, Mapping) or reply.get("status") not in STATUSES:
            raise SandboxError(f"the sandbox replied with something unexpected: {str(reply)[:200]}")
        try:
            listed = reply.get("files", [])
            files = tuple(SandboxFile(str(f["name"]), base64.b64decode(f["content_b64"])) for f in listed)
        except (KeyError, TypeError, ValueError) as error:
            raise SandboxError(f"the sandbox returned a malformed file: {error}") from None
        return cls(
            status=reply["status"],
            stdout=str(reply.get("stdout", "")),
            stderr=str(reply.get("stderr", "")),
            result=reply.get("result"),
            result_repr=bool(reply.get("result_repr")),
            result_truncated=bool(reply.get("result_truncated")),
            error=reply.get("error"),
            traceback=reply.get("traceback"),
            files=files,
            files_skipped=tuple(reply.get("files_skipped", [])),
            stdout_truncated=bool(reply.get("stdout_truncated")),
            stderr_truncated=bool(reply.get("stderr_truncated")),
            timings=dict(reply.get("timings") or {}),
        )

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def never() -> bool:
    """The cancel check of a call nobody gives up."""
    return False


class SandboxClient(ABC):
    """Runs Python in the sandbox. Subclasses implement the transport; :meth:`run` is the same for all."""

    def run(
        self,
        code: str,
        *,
        files: Sequence[SandboxFile] = (),
        time_limit_seconds: float = 30,
        memory_mb: int = 256,
        cancelled: Callable[[], bool] | None = None,
    ) -> SandboxResult:
        """``cancelled`` is asked while the call runs (a run's stop): once true, the call is given up and raises
        :class:`SandboxCancelled` where the transport can give one up (the local sandbox; a Lambda invocation
        runs to its end)."""
        event = {
            "code": code,
            "files": [{"name": f.name, "content_b64": base64.b64encode(f.data).decode("ascii")} for f in files],
            "time_limit_ms": int(time_limit_seconds * 1000),
            "memory_mb": memory_mb,
        }
        timeout = time_limit_seconds + TRANSPORT_MARGIN_SECONDS
        return SandboxResult.from_reply(self._invoke(event, timeout, cancelled or never))

    @abstractmethod
    def _invoke(self, event: dict[str, Any], timeout: float, cancelled: Callable[[], bool] = never) -> Any:
        """Send one request and return the decoded reply; raise :class:`SandboxError` when there is none."""

    def close(self) -> None:  # noqa: B027 - transports without resources need nothing
        """Release the transport (a local process); the client may be used again afterwards."""

    def __enter__(self) -> SandboxClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
