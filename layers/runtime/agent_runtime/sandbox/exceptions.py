"""Sandbox errors: the sandbox could not run the code at all (a broken install, an unreachable function).

Code that fails inside the sandbox is not an error here: it is a result with ``status="error"``.
"""

from __future__ import annotations

from ..errors import ConfigError, RunError


class SandboxUnavailableError(ConfigError):
    """No sandbox to run code in: Node or the sandbox's packages are missing, or the mode is ``off``."""


class SandboxError(RunError):
    """The sandbox failed to answer (it crashed, timed out at the transport, or replied with garbage)."""


class SandboxCancelled(SandboxError):
    """The caller gave the call up before its answer (the run was stopped): the code's child is ended."""
