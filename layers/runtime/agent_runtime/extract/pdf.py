"""PDF → text with page markers, through pypdf (pure Python, Lambda-sized)."""

from __future__ import annotations

import io
import time
from typing import Any

from .exceptions import ExtractionError
from .safety import Budget

# pypdf's own limits, tightened for one extraction (they default to 75 MB a stream): a 68 KB PDF whose page
# inflates to 70 MB of text peaked at 3.7 GB. 16 MB of content stream is ~2,000 pages of dense text.
# The tokens of one page's content stream bound the work the time limit cannot see: pypdf parses a page's whole
# stream before the first text operation (where the time is checked), ~80,000 tokens per CPU second here, so a
# page of 12 MB (600,000 tokens) overshot a 5 s limit inside page 1. A dense page of text has 3,000-5,000 tokens;
# one with more than 150,000 (a vector drawing, a bomb) is said unreadable, and the others are still read.
PDF_LIMITS: dict[str, Any] = {
    "zlib_maximum_output_length": 16 * 2**20,
    "lzw_maximum_output_length": 16 * 2**20,
    "run_length_maximum_output_length": 16 * 2**20,
    "array_based_stream_maximum_output_length": 16 * 2**20,
    "stream_decoding_work_maximum_length": 64 * 2**20,
    "stream_parsing_work_maximum_count": 150_000,
}


class _Stop(Exception):
    """Raised from inside a page's text extraction when the time budget runs out."""


def extract_pdf(data: bytes, budget: Budget) -> tuple[str, int]:
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    with apply_configuration(**PDF_LIMITS):
        try:
            reader = PdfReader(io.BytesIO(data))
            if reader.is_encrypted and not reader.decrypt(""):
                raise ExtractionError("the PDF is encrypted with a password; ask for an unprotected copy")
            total = len(reader.pages)
        except (PdfReadError, FileNotDecryptedError, ValueError, KeyError, OSError) as error:
            raise ExtractionError(f"the PDF is corrupt or truncated: {error}") from None
        return _pages(reader, total, budget), total


def _pages(reader: Any, total: int, budget: Budget) -> str:
    pages: list[str] = []
    chars, limits = 0, budget.limits
    for number in range(min(total, limits.max_pages)):
        budget.check_time(f"page {number + 1} of {total}")
        text = _page_text(reader, number, budget)
        if chars + len(text) > limits.max_chars:  # the character cap holds for PDFs as for every format
            pages.append(f"--- page {number + 1}-{total}: not extracted (the {limits.max_chars:,}-character limit) ---")
            break
        chars += len(text)
        pages.append(f"--- page {number + 1} ---\n{text.strip()}")
    else:
        if total > limits.max_pages:
            pages.append(f"--- pages {limits.max_pages + 1}-{total} were not extracted (page limit) ---")
    return "\n\n".join(pages) + "\n"


def _page_text(reader: Any, number: int, budget: Budget) -> str:
    def watch(*_: Any) -> None:  # called for every text operation: the time limit holds inside a page
        if time.monotonic() > budget.deadline:
            raise _Stop

    try:
        return reader.pages[number].extract_text(visitor_text=watch) or ""
    except _Stop:
        budget.check_time(f"inside page {number + 1}")
        raise
    except Exception as error:  # one broken or oversized page must not lose the others
        return f"[page {number + 1} could not be read: {type(error).__name__}]"
