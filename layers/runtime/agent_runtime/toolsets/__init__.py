"""Tools a workflow declares (``tools:``): MCP servers, OpenAPI operations, Python functions, Slack/JIRA built-ins."""

from __future__ import annotations

from ..workflows.tools import McpServerSettings, OpenApiSettings, ToolSettings, parse_tools_section
from .build import DeclaredTools, ToolEnv, check_names, close_sessions, declared_tools, validate_tools
from .exceptions import SecretMissingError, ToolSourceError

__all__ = [
    "DeclaredTools",
    "McpServerSettings",
    "OpenApiSettings",
    "SecretMissingError",
    "ToolEnv",
    "ToolSettings",
    "ToolSourceError",
    "check_names",
    "close_sessions",
    "declared_tools",
    "parse_tools_section",
    "validate_tools",
]
