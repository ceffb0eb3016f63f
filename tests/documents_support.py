"""Word documents for the extraction tests: a real one (python-docx), and any document.xml zipped as a .docx."""

from __future__ import annotations

import io
import zipfile

import docx


def make_docx() -> bytes:
    d = docx.Document()
    d.add_heading("Retry design", level=1)
    d.add_paragraph("Intro with PROJ-7.")
    d.add_heading("Goals", level=2)
    d.add_paragraph("Deliver at least once", style="List Bullet")
    d.add_paragraph("Within 24 hours", style="List Bullet 2")
    d.add_paragraph("Signed with HMAC", style="List Number")
    table = d.add_table(rows=2, cols=3)
    for col, text in enumerate(("Attempt", "Delay", "Note")):
        table.cell(0, col).text = text
    for col, text in enumerate(("1", "30 s", "a | b")):
        table.cell(1, col).text = text
    d.add_paragraph("After the table.")
    buffer = io.BytesIO()
    d.save(buffer)
    return buffer.getvalue()


def docx_with(
    document_xml: bytes, *, compress: int = zipfile.ZIP_DEFLATED, styles: bytes | None = None, **parts: bytes
) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compress) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", document_xml)
        if styles is not None:
            archive.writestr("word/styles.xml", styles)
        for name, data in parts.items():
            archive.writestr(name, data)
    return buffer.getvalue()


W = 'xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"'
