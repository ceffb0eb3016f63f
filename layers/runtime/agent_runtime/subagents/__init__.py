"""Sub-agents: isolated child runs for large files and side tasks; only their answer comes back.

The tool lives in ``subagents.tool`` (imported by the runtime), so the workflow schema can import the settings
without pulling in the workflow package it belongs to.
"""

from __future__ import annotations

from ..workflows.subagents import SubagentSettings, parse_subagents_section
from .scoped_files import ScopedFileStore

__all__ = ["ScopedFileStore", "SubagentSettings", "parse_subagents_section"]
