"""Document extraction: PDF (pypdf), DOCX (lxml, streamed), HTML, CSV and text → Markdown-like text."""

from __future__ import annotations

from .engine import Extracted, detect, extract
from .exceptions import ExtractionError
from .safety import Limits

__all__ = ["Extracted", "ExtractionError", "Limits", "detect", "extract"]
