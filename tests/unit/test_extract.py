"""Extraction on real documents (python-docx, fpdf2, pypdf) and on hostile ones."""

from __future__ import annotations

import io
import time
import zipfile
from collections.abc import Callable

import docx
import pytest
from agent_runtime.extract import ExtractionError, Limits, extract
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter


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


def test_zip_bomb_is_refused() -> None:
    bomb = docx_with(b"<w:document " + W.encode() + b"><w:body>" + b" " * (150 * 2**20) + b"</w:body></w:document>")
    assert len(bomb) < 1_000_000
    with pytest.raises(ExtractionError, match="zip bomb"):
        extract(bomb, "bomb.docx")


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
        b"<html><body><div>Hello <b>world</b><br>second line</div><span>loose</span> text in the body"
        b'<ol start="3"><li>three<ul><li>see <a href="https://x.test/run book">the [old] runbook</a></li></ul></li>'
        b'<li>four <a href="javascript:alert(1)">not a link</a></li></ol>'
        b"<pre>def f():\n    return 1</pre>"
        b"<table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td><table><tr><td>inner</td></tr></table></td></tr>"
        b"</table>after<script>bad()</script> the script</body></html>"
    )
    assert extract(page, "page.html").text == (
        "Hello world\nsecond line\n\nloose text in the body\n\n3. three\n"
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


MIXED = (
    '<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Plan</w:t></w:r></w:p>'
    "<w:sdt><w:sdtContent><w:p><w:r><w:t>In a content control</w:t></w:r></w:p></w:sdtContent></w:sdt>"
    '<w:p><w:pPr><w:numPr><w:ilvl w:val="1"/></w:numPr></w:pPr><w:r><w:t>Nested item</w:t></w:r></w:p>'
    "<w:p><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t>"
    "<w:instrText>HYPERLINK x</w:instrText></w:r><w:del><w:r><w:delText>gone</w:delText></w:r></w:del></w:p>"
    "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>x | y</w:t></w:r></w:p></w:tc><w:tc><w:tbl><w:tr><w:tc><w:p><w:r>"
    "<w:t>inner</w:t></w:r></w:p></w:tc></w:tr></w:tbl></w:tc></w:tr></w:tbl>"
    "<w:p><w:r><w:pict><w:txbxContent><w:p><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></w:pict></w:r>"
    "<w:r><w:t> after box</w:t></w:r></w:p><w:p><w:r><w:t>   </w:t></w:r></w:p>"
    '<w:p><w:pPr><w:pStyle w:val="Heading1"/><w:pPrChange><w:pPr><w:pStyle w:val="ListBullet"/><w:numPr>'
    '<w:ilvl w:val="2"/></w:numPr></w:pPr></w:pPrChange></w:pPr><w:r><w:t>Changed</w:t></w:r></w:p>'
    "<w:p><w:r><w:txbxContent><w:tbl><w:tr><w:tc><w:p><w:r><w:t>cell in a box</w:t></w:r></w:p></w:tc></w:tr>"
    "</w:tbl></w:txbxContent></w:r></w:p>"
)
MIXED_TEXT = (
    "## Plan\n\nIn a content control\n\n  - Nested item\n\na\tb\nc\n\n"
    "| x \\| y | inner |\n| --- | --- |\n\nboxed after box\n\n# Changed\n\ncell in a box\n"
)


@pytest.mark.parametrize("chunk", [1, 7, 64, 1 << 16])
def test_docx_structure_is_the_same_wherever_the_parts_are_cut(monkeypatch: pytest.MonkeyPatch, chunk: int) -> None:
    # The body is parsed a piece at a time and its completed blocks walked between pieces: a cut anywhere (in a
    # tag, a text, a table, a content control) must give the same text as the part in one piece (the last case).
    from agent_runtime.extract import docx as docx_module

    monkeypatch.setattr(docx_module, "CHUNK", chunk)
    data = docx_with(f"<w:document {W}><w:body>{MIXED}</w:body></w:document>".encode())
    text = extract(data, "mixed.docx").text
    assert text == MIXED_TEXT
    assert "HYPERLINK" not in text and "gone" not in text


@pytest.mark.parametrize(
    ("prolog", "encoding"),
    [
        ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n', "utf-8"),
        ("", "utf-8"),
        ("\ufeff<?xml version='1.0'?>", "utf-8"),
        ('<?xml version="1.0" encoding="UTF-16"?>', "utf-16"),
        ('<?xml version="1.0"?><?mso-application progid="Word.Document"?>', "utf-8"),
    ],
)
def test_docx_parts_with_or_without_a_declaration_and_in_utf_16_read_alike(
    monkeypatch: pytest.MonkeyPatch, prolog: str, encoding: str
) -> None:
    # The streamed parse finds the root by a mark slipped in after the declaration; UTF-16 gets no mark (parsed
    # to the end first), and neither way changes the text.
    from agent_runtime.extract import docx as docx_module

    monkeypatch.setattr(docx_module, "CHUNK", 3)
    document = f"{prolog}<w:document {W}><w:body>{MIXED}</w:body></w:document>"
    assert extract(docx_with(document.encode(encoding)), "mixed.docx").text == MIXED_TEXT


def test_docx_body_is_dropped_as_it_is_walked() -> None:
    from agent_runtime.extract import docx as docx_module
    from agent_runtime.extract.safety import Budget

    paragraphs = "".join(f"<w:p><w:r><w:t>paragraph {n}</w:t></w:r></w:p>" for n in range(20_000))
    xml = f'<?xml version="1.0"?><w:document {W}><w:body>{paragraphs}</w:body></w:document>'.encode()
    chunk = docx_module.CHUNK
    pieces = [xml[i : i + chunk] for i in range(0, len(xml), chunk)]
    held = [len(body) for body, _ in docx_module._batches(pieces, Budget(Limits()))]
    assert len(held) == len(pieces) + 1  # a walk after every piece, and the last once the part is parsed
    assert max(held) < 2 * chunk // 45  # never more than about a piece's worth of paragraphs


def test_feed_parser_hands_out_the_root_while_it_is_being_built() -> None:
    from agent_runtime.extract.safety import FeedParser

    parser = FeedParser()
    parser.feed(b'<?xml version="1.0"?><?mso-application progid="Word.Document"?><root><a/>')
    assert parser.root().tag == "root" and len(parser.root()) == 1
    parser.feed(b"<b/></root>")
    assert len(parser.close()) == 2
    utf16 = FeedParser()  # no place for the mark: the root comes at the end
    utf16.feed('<?xml version="1.0" encoding="UTF-16"?><root><a/>'.encode("utf-16"))
    assert utf16.root() is None
    utf16.feed("<b/></root>".encode("utf-16-le"))
    assert len(utf16.close()) == 2


MC = 'xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'


@pytest.mark.parametrize("chunk", [5, 1 << 16])
def test_docx_text_boxes_once_moves_once_and_cells_keep_their_paragraphs_apart(
    monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    from agent_runtime.extract import docx as docx_module

    monkeypatch.setattr(docx_module, "CHUNK", chunk)
    paragraphs = "".join(f"<w:p><w:r><w:t>Box {n}</w:t></w:r></w:p>" for n in ("one", "two"))
    box = f"<w:txbxContent>{paragraphs}</w:txbxContent>"
    body = (
        # Word writes a text box twice: DrawingML in the Choice, VML in the Fallback
        f"<w:p><w:r><w:t>See</w:t></w:r><w:r><mc:AlternateContent><mc:Choice><w:drawing>{box}</w:drawing></mc:Choice>"
        f"<mc:Fallback><w:pict>{box}</w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>"
        # a tracked move: the text leaves one place and arrives at another
        "<w:p><w:moveFrom><w:r><w:t>Moved</w:t></w:r></w:moveFrom><w:r><w:t>Stays</w:t></w:r></w:p>"
        "<w:p><w:moveTo><w:r><w:t>Moved</w:t></w:r></w:moveTo></w:p>"
        # cells: two paragraphs each; a merged cell makes the second row short; a content control wraps a row
        "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Line one</w:t></w:r></w:p><w:p><w:r><w:t>Line two</w:t></w:r></w:p></w:tc>"
        "<w:tc><w:p><w:r><w:t>B</w:t></w:r></w:p></w:tc></w:tr>"
        "<w:tr><w:tc><w:p><w:r><w:t>merged</w:t></w:r></w:p></w:tc></w:tr>"
        "<w:sdt><w:sdtContent><w:tr><w:tc><w:p><w:r><w:t>in control</w:t></w:r></w:p></w:tc><w:tc><w:p/></w:tc>"
        "</w:tr></w:sdtContent></w:sdt></w:tbl>"
        '<w:p><w:pPr><w:numPr><w:ilvl w:val="999999999"/></w:numPr></w:pPr><w:r><w:t>deep</w:t></w:r></w:p>'
        '<w:p><w:pPr><w:numPr><w:ilvl w:val="x"/></w:numPr></w:pPr><w:r><w:t>odd</w:t></w:r></w:p>'
        # DrawingML has its own p, t, tbl, tr and tc: a shape's text is not the document's paragraphs
        "<w:p><w:r><w:t>Shape:</w:t><w:drawing><a:tbl><a:tr><a:tc><a:p><a:r><a:t>drawn</a:t></a:r></a:p></a:tc>"
        "</a:tr></a:tbl></w:drawing><w:t> end</w:t></w:r></w:p>"
    )
    drawing = 'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"'
    data = docx_with(f"<w:document {W} {MC} {drawing}><w:body>{body}</w:body></w:document>".encode())
    assert extract(data, "boxes.docx").text == (
        "See Box one Box two\n\nStays\n\nMoved\n\n"
        "| Line one Line two | B |\n| --- | --- |\n| merged |  |\n| in control |  |\n\n"
        "                - deep\n- odd\n\nShape: end\n"
    )


NUMBERING = (
    f"<w:numbering {W}>"
    '<w:abstractNum w:abstractNumId="7"><w:lvl w:ilvl="0"><w:start w:val="1"/><w:numFmt w:val="decimal"/></w:lvl>'
    '<w:lvl w:ilvl="1"><w:numFmt w:val="bullet"/></w:lvl><w:lvl w:ilvl="2"><w:numFmt w:val="lowerLetter"/></w:lvl>'
    "</w:abstractNum>"
    '<w:num w:numId="1"><w:abstractNumId w:val="7"/></w:num>'
    '<w:num w:numId="2"><w:abstractNumId w:val="7"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="5"/>'
    "</w:lvlOverride></w:num>"
    "</w:numbering>"
)


def numbered(num_id: str, level: int, text: str) -> str:
    numbering = f'<w:numPr><w:ilvl w:val="{level}"/><w:numId w:val="{num_id}"/></w:numPr>'
    return f"<w:p><w:pPr>{numbering}</w:pPr><w:r><w:t>{text}</w:t></w:r></w:p>"


def test_numbered_lists_count_per_list_and_level_as_word_does() -> None:
    body = "".join(
        [
            numbered("1", 0, "Stop the queue"),
            numbered("1", 1, "note the offset"),
            numbered("1", 2, "sub step"),
            numbered("1", 2, "another"),
            numbered("1", 0, "Drain it"),
            numbered("1", 2, "lettered again from one"),
            "<w:p><w:r><w:t>An interruption.</w:t></w:r></w:p>",
            numbered("1", 0, "Restart"),  # the list carries on
            numbered("2", 0, "From five"),  # another list of the same definition, its start overridden
            numbered("0", 0, "Numbering off"),
            numbered("9", 0, "Unknown list"),
            '<w:p><w:pPr><w:pStyle w:val="ListNumber"/></w:pPr><w:r><w:t>Styled one</w:t></w:r></w:p>',
            '<w:p><w:pPr><w:pStyle w:val="ListNumber"/></w:pPr><w:r><w:t>Styled two</w:t></w:r></w:p>',
            '<w:p><w:pPr><w:pStyle w:val="ListParagraph"/></w:pPr><w:r><w:t>Indented prose</w:t></w:r></w:p>',
        ]
    )
    document = f"<w:document {W}><w:body>{body}</w:body></w:document>".encode()
    text = extract(docx_with(document, **{"word/numbering.xml": NUMBERING.encode()}), "n.docx").text
    assert text == (
        "1. Stop the queue\n  - note the offset\n    1. sub step\n    2. another\n2. Drain it\n"
        "    1. lettered again from one\n\nAn interruption.\n\n3. Restart\n5. From five\n\nNumbering off\n\n"
        "- Unknown list\n1. Styled one\n2. Styled two\n\nIndented prose\n"
    )
    broken = extract(docx_with(document, **{"word/numbering.xml": b"<w:numbering"}), "n.docx").text
    assert broken.startswith("- Stop the queue\n  - note the offset\n    - sub step")  # a damaged part: bullets


def test_docx_links_to_web_and_mail_addresses_are_markdown_links() -> None:
    rels = (
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId5" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"'
        ' Target="https://example.com/run book(1)" TargetMode="External"/>'
        '<Relationship Id="rId6" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"'
        ' Target="mailto:ops@example.com" TargetMode="External"/>'
        '<Relationship Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink"'
        ' Target="javascript:alert(1)" TargetMode="External"/>'
        "</Relationships>"
    )
    r = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'

    def link(label: str, rid: str = "", anchor: str = "") -> str:
        attributes = (f' r:id="{rid}"' if rid else "") + (f' w:anchor="{anchor}"' if anchor else "")
        return f"<w:hyperlink{attributes}><w:r><w:t>{label}</w:t></w:r></w:hyperlink>"

    def run(text: str) -> str:
        return f'<w:r><w:t xml:space="preserve">{text}</w:t></w:r>'

    body = (
        f"<w:p>{run('See ')}{link('the [old] runbook', 'rId5')}{run(', ')}{link('step 2', 'rId5', 'step2')}"
        f"{run(' or ')}{link('mail us', 'rId6')}{run('.')}</w:p>"
        f"<w:p>{link('Inside the document', anchor='_Toc1')}{run(' ')}{link('Not a web link', 'rId7')}"
        f"{link(' unknown', 'rId99')}</w:p>"
        f"<w:tbl><w:tr><w:tc><w:p>{link('in a cell', 'rId6')}</w:p></w:tc></w:tr></w:tbl>"
    )
    document = f"<w:document {W} {r}><w:body>{body}</w:body></w:document>".encode()
    text = extract(docx_with(document, **{"word/_rels/document.xml.rels": rels.encode()}), "links.docx").text
    assert text == (
        "See [the \\[old\\] runbook](https://example.com/run%20book%281%29), "
        "[step 2](https://example.com/run%20book%281%29#step2) or [mail us](mailto:ops@example.com).\n\n"
        "Inside the document Not a web link unknown\n\n| [in a cell](mailto:ops@example.com) |\n| --- |\n"
    )


def test_docx_footnotes_and_endnotes_are_markdown_footnotes() -> None:
    def notes(kind: str, texts: dict[str, str]) -> bytes:
        separators = f'<w:{kind} w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:{kind}>'
        items = "".join(
            f'<w:{kind} w:id="{n}"><w:p><w:r><w:{kind}Ref/></w:r><w:r><w:t xml:space="preserve"> {text}</w:t></w:r>'
            f"</w:p><w:p/><w:p><w:r><w:t>More.</w:t></w:r></w:p></w:{kind}>"
            for n, text in texts.items()
        )
        return f"<w:{kind}s {W}>{separators}{items}</w:{kind}s>".encode()

    def reference(kind: str, n: str) -> str:
        return f'<w:r><w:{kind}Reference w:id="{n}"/></w:r>'

    body = (
        f"<w:p><w:r><w:t>Retries</w:t></w:r>{reference('footnote', '2')}<w:r><w:t> back off</w:t></w:r>"
        f"{reference('footnote', '1')}<w:r><w:t>.</w:t></w:r></w:p>"
        f"<w:p><w:r><w:t>Again</w:t></w:r>{reference('footnote', '2')}{reference('endnote', '1')}"
        f"{reference('footnote', '9')}</w:p>"
    )
    document = f"<w:document {W}><w:body>{body}</w:body></w:document>".encode()
    parts = {
        "word/footnotes.xml": notes("footnote", {"1": "Exponential.", "2": "Up to  five   times."}),
        "word/endnotes.xml": notes("endnote", {"1": "See the runbook."}),
    }
    text = extract(docx_with(document, **parts), "notes.docx").text
    assert text == (
        "Retries[^1] back off[^2].\n\nAgain[^1][^e1][^3]\n\n[^1]: Up to five times. More.\n"
        "[^2]: Exponential. More.\n[^3]: (missing)\n[^e1]: See the runbook. More.\n"
    )
    damaged = extract(docx_with(document, **{"word/footnotes.xml": b"<w:footnotes"}), "notes.docx").text
    assert damaged.startswith("Retries[^1] back off[^2].") and "[^1]: (missing)" in damaged


def test_docx_pictures_are_marked_with_their_alt_text() -> None:
    namespaces = (
        'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" '
        'xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" '
        'xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"'
    )

    def drawing(name: str, alt: str, content: str) -> str:
        properties = f'name="{name}"' + (f' descr="{alt}"' if alt else "")
        graphic = f"<a:graphic><a:graphicData>{content}</a:graphicData></a:graphic>"
        return f"<w:r><w:drawing><wp:inline><wp:docPr id='1' {properties}/>{graphic}</wp:inline></w:drawing></w:r>"

    body = (
        f"<w:p><w:r><w:t>Flow: </w:t></w:r>{drawing('Picture 1', 'Retry  sequence', '<pic:pic/>')}</w:p>"
        f"<w:p>{drawing('Picture 2', '', '<pic:pic/>')}</w:p>"
        f"<w:p><w:r><w:t>Box</w:t></w:r>{drawing('Text Box 3', 'a shape', '<a:sp/>')}</w:p>"
    )
    document = f"<w:document {W} {namespaces}><w:body>{body}</w:body></w:document>".encode()
    assert extract(docx_with(document), "pictures.docx").text == "Flow: [image: Retry sequence]\n\n[image]\n\nBox\n"


def styled(*paragraphs: tuple[str, str]) -> bytes:
    body = "".join(f'<w:p><w:pPr><w:pStyle w:val="{s}"/></w:pPr><w:r><w:t>{t}</w:t></w:r></w:p>' for s, t in paragraphs)
    return f"<w:document {W}><w:body>{body}</w:body></w:document>".encode()


def test_localised_and_custom_style_ids_are_read_by_their_names() -> None:
    styles = (
        f"<w:styles {W}>"
        '<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="1"><w:name w:val="heading 2"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="Aufzhlungszeichen"><w:name w:val="List Bullet"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="BodyText"><w:name w:val="Body Text"/></w:style>'
        "</w:styles>"
    ).encode()
    document = styled(("berschrift1", "Plan"), ("1", "Goals"), ("Aufzhlungszeichen", "one"), ("BodyText", "Prose"))
    text = extract(docx_with(document, styles=styles), "de.docx").text
    assert text == "# Plan\n\n## Goals\n\n- one\n\nProse\n"


def test_style_ids_that_say_what_they_are_need_no_styles_xml_and_a_damaged_one_loses_no_text() -> None:
    broken = b"<w:styles><unclosed>"
    document = styled(("Heading2", "Plan"), ("ListBullet2", "deep"), ("Title", "Doc"), ("berschrift1", "Text"))
    assert extract(docx_with(document, styles=broken), "en.docx").text == "## Plan\n\n  - deep\n\n# Doc\n\nText\n"
