"""Extraction errors are tool errors: the model is told what is wrong with the document, and the run goes on."""

from __future__ import annotations

from ..errors import ToolError


class ExtractionError(ToolError):
    """The document cannot be turned into text (corrupt, encrypted, hostile, unsupported)."""
