"""``extract_file``, ``peek_file`` and ``load_file``: the file tools for documents and whole files."""

from __future__ import annotations

from ..errors import ToolError
from ..run_context import RunContext
from ..tools import Tool, tool
from .readable import OWN, extracted, is_document_file, text_meta
from .store import EXTRACTED
from .tools import MAX_BYTES_PER_TOKEN, MAX_CHARS_WITHOUT_LEDGER, fits_budget, refusal_message

PREVIEW_CHARS = 1_500
PEEK_MAX = 4_096


@tool(offload=False)
def extract_file(ctx: RunContext, id: str) -> str:
    """Convert a document (PDF, DOCX, PPTX, XLSX, HTML, CSV or text) to Markdown-like text, saved as a new file.

    Returns the new file's id, its size and a short preview. Read it with file_read and file_regex like any other
    file: headings, list items, table rows, links and footnotes are kept; PDF pages are marked "--- page N ---",
    slides "## Slide N", sheets "## Sheet: name", pictures "[image: alt text]".

    Args:
        id: The id of the document in the files list.
    """
    meta = ctx.files.meta(id)
    done = EXTRACTED.use(ctx.state)
    if id in done:
        return _describe(ctx, done[id], already=True)
    if meta.source not in OWN:
        is_document_file(ctx, meta)  # a binary file is an error saying so, never "text" of its bytes
    new, result = extracted(ctx, meta)
    pages = f", {result.pages} pages" if result.pages else ""
    return _describe(ctx, new.id, already=False, extra=f"from {meta.name} ({result.kind}{pages})")


def _describe(ctx: RunContext, file_id: str, *, already: bool, extra: str = "") -> str:
    text = ctx.files.read(file_id).decode("utf-8", errors="replace")
    lines = text.count("\n") + 1
    tokens = ctx.ledger.count(text) if ctx.ledger else len(text) // 4
    head = "already extracted" if already else f"extracted {extra}".strip()
    return (
        f'[{head}: file {file_id}, {tokens:,} tokens, {lines:,} lines. Read it with file_read(id="{file_id}", '
        f"start_line=...) or search it with file_regex.]\n{text[:PREVIEW_CHARS]}"
        + ("\n[…]" if len(text) > PREVIEW_CHARS else "")
    )


@tool(offload=False)
def peek_file(ctx: RunContext, id: str, start: int = 0, stop: int = 512) -> str:
    """Look at raw bytes of any file (at most 4 KB), e.g. to see what an unknown attachment is.

    Text is shown as text; binary content as hex.

    Args:
        id: The file id.
        start: First byte (0-based).
        stop: Byte offset to stop before.
    """
    meta = ctx.files.meta(id)
    stop = min(stop, start + PEEK_MAX, meta.size_bytes)
    data = ctx.files.read(id, start, stop)
    if ctx.ledger is not None and stop > start:
        ctx.ledger.record_read(id, tool="peek_file", bytes_=(start, stop - 1))
    binary = any(b < 0x20 and b not in (9, 10, 13) for b in data)  # valid UTF-8 can still be binary
    try:
        shown = " ".join(f"{b:02x}" for b in data) if binary else data.decode("utf-8")
    except UnicodeDecodeError:
        shown = " ".join(f"{b:02x}" for b in data)
    return f"[{meta.name} ({meta.mimetype}, {meta.size_bytes:,} bytes) bytes {start}-{stop}]\n{shown}"


@tool(offload=False)
def load_file(ctx: RunContext, id: str) -> str:
    """Load a whole text file into the conversation at once (refused when it does not fit the context budget).

    A document (PDF, DOCX, PPTX, XLSX) loads its extracted text; for big files prefer file_regex and file_read
    ranges.

    Args:
        id: The file id.
    """
    meta = text_meta(ctx, id)  # a document's extracted text; a binary file is refused, saying so
    budget = ctx.ledger.remaining_tokens() if ctx.ledger is not None else MAX_CHARS_WITHOUT_LEDGER
    if meta.size_bytes > budget * MAX_BYTES_PER_TOKEN:  # sized from metadata: never loaded to be refused
        raise ToolError(
            f"not loaded: {meta.name} is {meta.size_bytes:,} bytes, far more than the {budget:,} tokens left in the "
            "context window. Read it in parts with file_read (it returns what fits and where to continue), or "
            "search it with file_regex."
        )
    data = ctx.files.read(meta.id)
    text = f"[{meta.name} ({meta.id}), whole file]\n" + data.decode("utf-8", errors="replace")
    ok, tokens = fits_budget(ctx, text)
    if not ok:
        raise ToolError(
            refusal_message(ctx, meta.name, "the whole file", tokens, "file_read, which returns what fits,")
        )
    if ctx.ledger is not None:
        ctx.ledger.record_read(meta.id, tool="load_file", bytes_=(0, max(meta.size_bytes - 1, 0)))
    return text


DOCUMENT_TOOLS: tuple[Tool, ...] = (extract_file, peek_file, load_file)
