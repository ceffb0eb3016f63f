"""Errors of declared tool sources."""

from __future__ import annotations

from ..errors import ConfigError, ToolError


class ToolSourceError(ToolError):
    """A source could not be reached or answered badly: the call fails, the model is told, the run goes on."""


class SecretMissingError(ConfigError):
    """A ``${secret:NAME}`` the tools section refers to has no value."""
