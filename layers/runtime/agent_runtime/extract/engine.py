"""Which extractor for which document: decided by content first (magic bytes, zip parts), then by name."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass

from .exceptions import ExtractionError
from .safety import Budget, Limits

DOCUMENTS = {".pdf": "PDF", ".docx": "DOCX", ".pptx": "PPTX", ".xlsx": "XLSX"}  # a name's suffix → the kind it says
TEXT_TYPES = (".txt", ".md", ".markdown", ".log", ".json", ".yaml", ".yml", ".xml", ".rst")


@dataclass(frozen=True, slots=True)
class Extracted:
    text: str
    kind: str  # docx | pdf | html | csv | text
    pages: int | None = None


def detect(data: bytes, name: str) -> str:
    return _sniff(data, name)[0]


def _opened(archive: zipfile.ZipFile | None) -> zipfile.ZipFile:
    if archive is None:  # _sniff names an Office kind only with its opened archive
        raise ExtractionError("the document's archive could not be opened")
    return archive


def _sniff(data: bytes, name: str) -> tuple[str, zipfile.ZipFile | None]:
    """The kind, and for an Office document its opened zip (read once, then handed to the extractor)."""
    if data.startswith(b"%PDF"):
        return "pdf", None
    if data.startswith(b"PK\x03\x04"):
        try:
            archive = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, OSError):
            said = _named_kind(name)
            if said:
                raise ExtractionError(f"the {said} is corrupt or truncated: its zip container is broken") from None
            raise ExtractionError("the file looks like a zip container but is broken") from None
        names = set(archive.namelist())
        for kind, part in (
            ("docx", "word/document.xml"),
            ("pptx", "ppt/presentation.xml"),
            ("xlsx", "xl/workbook.xml"),
        ):
            if part in names:
                return kind, archive
        raise ExtractionError("a zip archive, not a supported Office document (DOCX, PPTX, XLSX)")
    return _plain_kind(data, name), None


def _named_kind(name: str) -> str | None:
    """The document kind the file's name says (``report.pdf``: PDF), if any."""
    lower = name.lower()
    return DOCUMENTS.get(lower[lower.rfind(".") :]) if "." in lower else None


def _plain_kind(data: bytes, name: str) -> str:
    said = _named_kind(name)
    if said:  # named as a document, but its first bytes are not one's
        raise ExtractionError(f"the {said} is corrupt: it does not begin as a {said} file does (or it is not one)")
    lower = name.lower()
    if lower.endswith((".html", ".htm")) or data[:512].lstrip().lower().startswith((b"<!doctype html", b"<html")):
        return "html"
    if lower.endswith((".csv", ".tsv")):
        return "csv"
    if lower.endswith(TEXT_TYPES) or _looks_like_text(data):
        return "text"
    raise ExtractionError(f"{name}: unsupported binary format (supported: PDF, DOCX, PPTX, XLSX, HTML, CSV, text)")


def _looks_like_text(data: bytes) -> bool:
    head = data[:4096]
    if b"\0" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as error:
        return error.start > len(head) - 4  # a multi-byte character cut at the end of the sample
    return True


def extract(data: bytes, name: str, *, limits: Limits | None = None) -> Extracted:
    """Turn a document into Markdown-like text. Raises ``ExtractionError`` with a clear reason."""
    budget = Budget(limits or Limits())
    kind, archive = _sniff(data, name)
    try:
        if kind == "pdf":
            from .pdf import extract_pdf

            text, pages = extract_pdf(data, budget)
            return Extracted(text, kind, pages)
        if kind == "docx":
            from .docx import extract_docx

            return Extracted(extract_docx(_opened(archive), budget), kind)
        if kind in ("pptx", "xlsx"):
            from .ooxml import extract_pptx, extract_xlsx

            return Extracted((extract_pptx if kind == "pptx" else extract_xlsx)(_opened(archive), budget), kind)
        from .html_text import extract_html
        from .simple import extract_csv, extract_text

        return Extracted({"html": extract_html, "csv": extract_csv, "text": extract_text}[kind](data, budget), kind)
    except ImportError as error:
        raise ExtractionError(
            f"the document libraries are not installed here ({error.name}): deploy the documents layer"
        ) from None
