"""PDF → text with page markers, through pypdf (pure Python, Lambda-sized)."""

from __future__ import annotations

import io

from .exceptions import ExtractionError
from .safety import Budget


def extract_pdf(data: bytes, budget: Budget) -> tuple[str, int]:
    from pypdf import PdfReader
    from pypdf.errors import FileNotDecryptedError, PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise ExtractionError("the PDF is encrypted with a password; ask for an unprotected copy")
        total = len(reader.pages)
    except (PdfReadError, FileNotDecryptedError, ValueError, KeyError, OSError) as error:
        raise ExtractionError(f"the PDF is corrupt or truncated: {error}") from None
    pages = []
    for number in range(min(total, budget.limits.max_pages)):
        budget.check_time(f"page {number + 1} of {total}")
        try:
            text = reader.pages[number].extract_text() or ""
        except Exception as error:  # one broken page must not lose the others
            text = f"[page {number + 1} could not be read: {type(error).__name__}]"
        pages.append(f"--- page {number + 1} ---\n{text.strip()}")
    if total > budget.limits.max_pages:
        pages.append(f"--- pages {budget.limits.max_pages + 1}-{total} were not extracted (page limit) ---")
    return "\n\n".join(pages) + "\n", total
