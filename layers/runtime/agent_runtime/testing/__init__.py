"""Test doubles shipped with the package: a scripted OpenAI-compatible server reached over real HTTP."""

from __future__ import annotations

from .kinds import ServerKind
from .server import ScriptedServer, ScriptError, rough_token_count
from .steps import (
    Fail,
    Paced,
    Raw,
    Reply,
    ScriptedCall,
    ScriptedRequest,
    Step,
    call,
    calls,
    context_overflow,
    rate_limited,
    reply,
    server_error,
)

__all__ = [
    "Fail",
    "Paced",
    "Raw",
    "Reply",
    "ScriptError",
    "ScriptedCall",
    "ScriptedRequest",
    "ScriptedServer",
    "ServerKind",
    "Step",
    "call",
    "calls",
    "context_overflow",
    "rate_limited",
    "reply",
    "rough_token_count",
    "server_error",
]
