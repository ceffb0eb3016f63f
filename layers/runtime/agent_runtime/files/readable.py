"""What the file tools show of a file: its text, the text extracted from a document, or a clear error.

One gate for every tool that shows a file's content (file_read, file_regex, load_file, extract_file) and for the
preload, so an attachment reads the same everywhere, and as ``agent-runtime extract`` reads it: a document (PDF,
DOCX, PPTX, XLSX: by its first bytes, or by its name when those say nothing) is extracted once and its text is
what is read; one that does not extract is a tool error that names its type and why. Any other file is text when
it passes the text test below; if not, it is "binary": never decoded into the window as text.

The text test: the file's first 8 KB hold no NUL byte, and at most one byte in 50 is not text (not valid UTF-8, or
a control character other than tab, newline, carriage return, form feed and escape).
"""

from __future__ import annotations

import codecs
from pathlib import PurePath

from ..errors import ToolError
from ..extract import Extracted, ExtractionError, extract
from ..extract.engine import DOCUMENTS
from ..run_context import RunContext
from ..state import Slot
from .store import EXTRACTED, FileMeta

TEXT_SAMPLE = 8192  # bytes the text test looks at
MAX_ODD = 1 / 50  # of them, at most this share may be other than text
_TEXT_CONTROLS = frozenset("\t\n\r\f\x1b")
OWN = ("virtual", "extracted", "archive")  # the runtime's own files: text it wrote
# Run state: the files that passed the text test (tested once a run: a read after the first costs no sample).
TEXT_FILES: Slot[list[str]] = Slot("text_files", list, owner=__name__)


class UnreadableFileError(ToolError):
    """A file that is neither a document that extracts nor text."""


def looks_like_text(sample: bytes, *, whole: bool) -> bool:
    """The text test on a file's first bytes (``whole``: the sample is the whole file, so a character cut at its
    end is not the sample's cut)."""
    if b"\0" in sample:
        return False
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(sample, final=whole)
    odd = text.count("\ufffd") + sum(1 for char in text if char < " " and char not in _TEXT_CONTROLS)
    return odd <= len(sample) * MAX_ODD


def is_document(head: bytes, name: str) -> bool:
    """A PDF or an Office document (or a zip named as one): what extraction reads."""
    return head.startswith((b"%PDF", b"PK\x03\x04")) or PurePath(name.lower()).suffix in DOCUMENTS


def text_meta(ctx: RunContext, file_id: str) -> FileMeta:
    """The file whose text to show for ``file_id``: itself when it is text, a document's extracted text (extracted
    once, as extract_file does). Raises a ``ToolError`` the model reads when there is no text to show."""
    meta = ctx.files.meta(file_id)
    if meta.source in OWN:
        return meta
    done, text = EXTRACTED.use(ctx.state), TEXT_FILES.use(ctx.state)
    if file_id in done:
        return ctx.files.meta(done[file_id])
    if file_id in text:
        return meta
    if is_document_file(ctx, meta):
        return extracted(ctx, meta)[0]
    text.append(file_id)
    return meta


def is_document_file(ctx: RunContext, meta: FileMeta) -> bool:
    """True for a document (to extract), False for text; a file that is neither raises ``UnreadableFileError``."""
    head = ctx.files.read(meta.id, 0, TEXT_SAMPLE)
    if is_document(head, meta.name):
        return True
    if not looks_like_text(head, whole=meta.size_bytes <= TEXT_SAMPLE):
        raise UnreadableFileError(binary(meta))
    return False


def binary(meta: FileMeta) -> str:
    return (
        f"{meta.name} ({meta.id}) is binary, {meta.size_bytes:,} bytes, type {meta.mimetype}: it cannot be read as "
        "text (peek_file shows its bytes in hex)"
    )


def extracted(ctx: RunContext, meta: FileMeta) -> tuple[FileMeta, Extracted]:
    """A document's text, extracted and stored as a file of the run (``EXTRACTED`` maps the document to it). A
    document that does not extract is an ``ExtractionError`` naming the file, its type and why."""
    try:
        result = extract(ctx.files.read(meta.id), meta.name)
    except ExtractionError as error:
        raise ExtractionError(f"{meta.name} ({meta.id}) cannot be read: {error}") from None
    name = f"{PurePath(meta.name).stem}.{result.kind}.md"
    new = ctx.files.put(result.text.encode("utf-8"), name=name, mimetype="text/markdown", source="extracted")
    EXTRACTED.use(ctx.state)[meta.id] = new.id
    return new, result
