"""Extraction on real documents (python-docx, fpdf2, pypdf) and on hostile ones."""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Callable

import pytest
from agent_runtime.extract import ExtractionError, Limits, extract
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from tests.documents_support import W, docx_with, make_docx


def make_pdf(pages: int) -> bytes:
    pdf = FPDF()
    pdf.set_font("helvetica", size=12)
    for number in range(1, pages + 1):
        pdf.add_page()
        pdf.cell(text=f"Page {number} mentions TICKET-{number}")
    return bytes(pdf.output())


def test_docx_keeps_headings_lists_and_tables_in_order() -> None:
    text = extract(make_docx(), "design.docx").text
    assert text.startswith("# Retry design\n\nIntro with PROJ-7.\n\n## Goals\n\n")
    assert "- Deliver at least once\n  - Within 24 hours\n1. Signed with HMAC" in text
    assert "| Attempt | Delay | Note |\n| --- | --- | --- |\n| 1 | 30 s | a \\| b |" in text
    assert text.index("| Attempt") < text.index("After the table.")


def test_pdf_pages_are_marked() -> None:
    result = extract(make_pdf(3), "report.pdf")
    assert result.kind == "pdf" and result.pages == 3
    assert "--- page 2 ---\nPage 2 mentions TICKET-2" in result.text


@pytest.mark.timed
def test_page_limit_bounds_a_2000_page_pdf() -> None:
    started = time.monotonic()
    result = extract(make_pdf(2000), "huge.pdf", limits=Limits(max_pages=50))
    assert result.pages == 2000
    assert "--- page 50 ---" in result.text and "--- page 51 ---\n" not in result.text
    assert "pages 51-2000 were not extracted (page limit)" in result.text
    assert time.monotonic() - started < 30


def test_encrypted_pdf_gives_a_clear_error() -> None:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(1))))
    writer.encrypt("s3cret")
    buffer = io.BytesIO()
    writer.write(buffer)
    with pytest.raises(ExtractionError, match="encrypted with a password"):
        extract(buffer.getvalue(), "locked.pdf")


@pytest.mark.parametrize("cut", [0.3, 0.6])
def test_truncated_documents_give_clear_errors(cut: float) -> None:
    data = make_docx()
    with pytest.raises(ExtractionError, match=r"zip|corrupt|truncated|broken"):
        extract(data[: int(len(data) * cut)], "broken.docx")
    pdf = make_pdf(5)
    with pytest.raises(ExtractionError, match="corrupt or truncated"):
        extract(pdf[: int(len(pdf) * cut)][:200], "broken.pdf")


def test_zip_bomb_is_refused() -> None:
    bomb = docx_with(b"<w:document " + W.encode() + b"><w:body>" + b" " * (150 * 2**20) + b"</w:body></w:document>")
    assert len(bomb) < 1_000_000
    with pytest.raises(ExtractionError, match="zip bomb"):
        extract(bomb, "bomb.docx")


@pytest.mark.timed
@pytest.mark.parametrize("chunk", [16, 1 << 16])  # cut in the DTD, or in one piece
def test_entity_expansion_and_external_entities_are_not_resolved(
    tmp_path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:  # type: ignore[no-untyped-def]
    from agent_runtime.extract import docx as docx_module

    monkeypatch.setattr(docx_module, "CHUNK", chunk)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP-SECRET", encoding="utf-8")
    laughs = "".join(
        f'<!ENTITY l{i} "{"&l" + str(i - 1) + ";" * 1 if i else "lol"}{("&l" + str(i - 1) + ";") * 9 if i else ""}">'
        for i in range(10)
    )
    xml = (
        f'<?xml version="1.0"?><!DOCTYPE d [{laughs}<!ENTITY xxe SYSTEM "file://{secret}">]>'
        f"<w:document {W}><w:body><w:p><w:r><w:t>&l9; &xxe; visible</w:t></w:r></w:p></w:body></w:document>"
    ).encode()
    started = time.monotonic()
    try:
        text = extract(docx_with(xml), "evil.docx").text
    except ExtractionError:
        text = ""
    assert "TOP-SECRET" not in text and "lollollol" not in text
    assert time.monotonic() - started < 5


def test_deeply_nested_xml_is_refused() -> None:
    xml = f"<w:document {W}><w:body>".encode() + b"<w:sdt>" * 50_000 + b"</w:sdt>" * 50_000 + b"</w:body></w:document>"
    with pytest.raises(ExtractionError, match="invalid or hostile"):
        extract(docx_with(xml, compress=zipfile.ZIP_STORED), "deep.docx")


def test_html_csv_and_text() -> None:
    html = (
        b"<html><head><style>x{}</style></head><body><h2>Title</h2><p>Para <b>bold</b></p><ul><li>one</li></ul>"
        b"<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table><script>alert(1)</script></body></html>"
    )
    text = extract(html, "page.html").text
    assert (
        "## Title" in text and "Para bold" in text and "- one" in text and "| a | b |" in text and "alert" not in text
    )
    csv_text = extract(b"name,amount\nacme,12\nglobex,7\n", "t.csv").text
    assert csv_text.startswith("| name | amount |\n| --- | --- |\n| acme | 12 |")
    rows = "\n".join(f"r{n},{n}" for n in range(5000)).encode()
    assert "[… 3,000 more rows not shown]" in extract(rows, "big.csv").text
    assert extract("plain café\n".encode(), "notes.txt").text == "plain café\n"


@pytest.mark.timed
def test_xlsx_cells_without_references_follow_on_and_hostile_references_are_dropped() -> None:
    sheet = (
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        '<row><c t="inlineStr"><is><t>a</t></is></c><c><v>1</v></c><c r="E1"><v>5</v></c><c><v>6</v></c></row>'
        '<row><c r="ZZZZZZZZZZ2"><v>bomb</v></c><c r="XFE2"><v>past the last column</v></c><c r="B2"><v>b</v></c>'
        "</row></sheetData></worksheet>"
    )
    book = (
        '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
        'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
        '<sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Type="worksheet" Target="worksheets/sheet1.xml"/></Relationships>'
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("xl/workbook.xml", book)
        archive.writestr("xl/_rels/workbook.xml.rels", rels)
        archive.writestr("xl/worksheets/sheet1.xml", sheet)
    started = time.monotonic()
    text = extract(buffer.getvalue(), "s.xlsx").text
    assert time.monotonic() - started < 2
    assert (
        text == "## Sheet: S\n\n| a | 1 |  |  | 5 | 6 |\n| --- | --- | --- | --- | --- | --- |\n|  | b |  |  |  |  |\n"
    )


def test_html_text_anywhere_lists_links_code_and_tables() -> None:
    page = (
        b'<html><body><div>Hello <b>world</b><br>second line<img src="x.png" alt="Retry  flow"><img src="p.gif">'
        b"</div><span>loose</span> text in the body"
        b'<ol start="3"><li>three<ul><li>see <a href="https://x.test/run book">the [old] runbook</a></li></ul></li>'
        b'<li>four <a href="javascript:alert(1)">not a link</a></li></ol>'
        b"<pre>def f():\n    return 1</pre>"
        b"<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td><table><tr><td>inner</td></tr></table></td></tr>"
        b"</table>after<script>bad()</script> the script</body></html>"
    )
    assert extract(page, "page.html").text == (
        "Hello world\nsecond line [image: Retry flow]\n\nloose text in the body\n\n3. three\n"
        "  - see [the \\[old\\] runbook](https://x.test/run%20book)\n4. four not a link\n\n"
        "```\ndef f():\n    return 1\n```\n\n| k | v |\n| --- | --- |\n| a | inner |\n\nafter the script\n"
    )
    rows = b"".join(b"<tr><td>%d</td></tr>" % n for n in range(50))
    bounded = extract(b"<table>" + rows + b"</table>", "t.html", limits=Limits(max_rows=10)).text
    assert "| 9 |" in bounded and "| 10 |" not in bounded and "[… 40 more rows not shown]" in bounded
    with pytest.raises(ExtractionError, match="nested too deeply"):
        extract(b"<html><body>" + b"<div>" * 3000 + b"deep" + b"</div>" * 3000 + b"</body></html>", "deep.html")


def test_unsupported_binaries_are_named() -> None:
    with pytest.raises(ExtractionError, match="unsupported binary format"):
        extract(b"\x89PNG\r\n\x1a\n\0\0", "image.png")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("readme.txt", "hi")
    with pytest.raises(ExtractionError, match="not a supported Office document"):
        extract(archive.getvalue(), "files.zip")


def make_pptx() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Retry plan"
    body = slide.placeholders[1].text_frame
    body.text = "Backoff with jitter"
    deeper = body.add_paragraph()
    deeper.text, deeper.level = "Cap at 24 h", 1
    slide.notes_slide.notes_text_frame.text = "Mention PROJ-42"
    second = deck.slides.add_slide(deck.slide_layouts[5])
    second.shapes.title.text = "Numbers"
    table = second.shapes.add_table(2, 2, Inches(1), Inches(1), Inches(4), Inches(1)).table
    for (row, col), text in {(0, 0): "a", (0, 1): "b", (1, 0): "1", (1, 1): "2"}.items():
        table.cell(row, col).text = text
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def test_pptx_slides_with_titles_bullets_tables_and_notes() -> None:
    text = extract(make_pptx(), "deck.pptx").text
    assert text.startswith("## Slide 1: Retry plan\n\n- Backoff with jitter\n  - Cap at 24 h\n\nNotes: Mention PROJ-42")
    assert "## Slide 2: Numbers\n\n| a | b |\n| --- | --- |\n| 1 | 2 |" in text


def pptx_changed(part: str, change: Callable[[bytes], bytes]) -> bytes:
    source = zipfile.ZipFile(io.BytesIO(make_pptx()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for item in source.infolist():
            data = source.read(item)
            target.writestr(item, change(data) if item.filename == part else data)
    return buffer.getvalue()


def test_a_broken_slide_is_named() -> None:
    broken = pptx_changed("ppt/slides/slide2.xml", lambda data: data[: len(data) // 2])
    with pytest.raises(ExtractionError, match=r"ppt/slides/slide2\.xml is invalid or hostile"):
        extract(broken, "deck.pptx")


@pytest.mark.parametrize(("level", "indent"), [("999999999", " " * 16), ("x", "")])
def test_a_hostile_bullet_level_is_bounded(level: str, indent: str) -> None:
    deck = pptx_changed("ppt/slides/slide1.xml", lambda data: data.replace(b'lvl="1"', f'lvl="{level}"'.encode()))
    assert f"\n{indent}- Cap at 24 h\n" in extract(deck, "deck.pptx").text


def test_xlsx_sheets_as_bounded_tables() -> None:
    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Costs"
    sheet.append(["item", "usd"])
    for n in range(3000):
        sheet.append([f"row{n}", n])
    book.create_sheet("Empty")
    buffer = io.BytesIO()
    book.save(buffer)
    text = extract(buffer.getvalue(), "book.xlsx", limits=Limits(max_rows=100)).text
    assert text.startswith("## Sheet: Costs\n\n| item | usd |\n| --- | --- |\n| row0 | 0 |")
    assert "[… 2,901 more rows not shown]" in text
    assert "## Sheet: Empty\n\n(empty sheet)" in text


def test_a_csv_with_a_200_kb_field_is_extracted() -> None:
    """Was: '_csv.Error: field larger than field limit' as a traceback."""
    big = "x" * 200_000
    result = extract(f'id,payload\n1,"{big}"\n2,small\n'.encode(), "data.csv")
    assert big in result.text and "small" in result.text
