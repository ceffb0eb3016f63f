"""Sandboxed Python: the ``python`` tool and the clients that reach the Node + Pyodide sandbox.

The boundary is the sandbox's host (a Deno child with no permissions), not Pyodide; see functions/sandbox/README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..workflows.sandbox import SandboxSettings, parse_sandbox_section
    from .aws import LambdaSandbox
    from .client import SandboxClient, SandboxFile, SandboxResult
    from .exceptions import SandboxError, SandboxUnavailableError
    from .local import LocalSandbox
    from .tool import open_sandbox, python_tool, sandbox_for

__getattr__, __dir__ = lazy_exports(
    __name__,
    {
        "LambdaSandbox": ".aws",
        "SandboxClient": ".client",
        "SandboxFile": ".client",
        "SandboxResult": ".client",
        "SandboxError": ".exceptions",
        "SandboxUnavailableError": ".exceptions",
        "LocalSandbox": ".local",
        "SandboxSettings": "..workflows.sandbox",
        "parse_sandbox_section": "..workflows.sandbox",
        "open_sandbox": ".tool",
        "python_tool": ".tool",
        "sandbox_for": ".tool",
    },
)


__all__ = [
    "LambdaSandbox",
    "LocalSandbox",
    "SandboxClient",
    "SandboxError",
    "SandboxFile",
    "SandboxResult",
    "SandboxSettings",
    "SandboxUnavailableError",
    "open_sandbox",
    "parse_sandbox_section",
    "python_tool",
    "sandbox_for",
]
