"""The requester's credential inside one tool call: what a tool that acts as the person who asked sends.

A tool declared ``as_requester: <provider>`` (``workflows/oauth.py``) is called with the requester's access token
for that provider set here, for the call's duration only (``agent_runtime.identity`` sets it, after the person has
connected); an OpenAPI source adds its ``Authorization`` header, a Python tool reads it::

    from agent_runtime import requester_credential, tool

    @tool
    def my_repos() -> str:
        \"\"\"The repositories of the person who asked.\"\"\"
        return httpx.get("https://api.github.com/user/repos", headers=requester_credential().headers()).text

The token never leaves the call: whatever the tool returns or raises is redacted of it before the model, a log or
the record sees it.
"""

from __future__ import annotations

from contextvars import ContextVar
from dataclasses import dataclass, field

from .errors import ToolError


@dataclass(frozen=True, slots=True)
class Credential:
    provider: str
    person: str  # who the run acts for (slack:U0123)
    access_token: str = field(repr=False)
    token_type: str = "Bearer"

    def headers(self) -> dict[str, str]:
        kind = "Bearer" if self.token_type.lower() == "bearer" else self.token_type
        return {"Authorization": f"{kind} {self.access_token}"}


class TokenRejected(ToolError):
    """The provider refused the requester's token (HTTP 401: revoked, or expired at its end): raised by a tool, it
    makes the stack forget the token, so the next call asks the person to connect again."""


CURRENT: ContextVar[Credential | None] = ContextVar("agent_runtime_requester_credential", default=None)


def requester_credential() -> Credential:
    """The credential of the tool call under way; a ``ToolError`` for a tool that does not act as the requester."""
    found = CURRENT.get()
    if found is None:
        raise ToolError("this tool is not declared as_requester: it has no requester's credential to use")
    return found
