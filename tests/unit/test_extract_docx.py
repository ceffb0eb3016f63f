"""DOCX structure: what the OOXML says, as Markdown (lists, links, notes, pictures, text boxes, styles), and the
streamed parse that gives the same text wherever the part is cut."""

from __future__ import annotations

import pytest
from agent_runtime.extract import ExtractionError, Limits, extract

from tests.documents_support import W, docx_with


def document(body: str, *namespaces: str) -> bytes:
    """word/document.xml around ``body``, with the w: namespace and any others given."""
    return f"<w:document {' '.join((W, *namespaces))}><w:body>{body}</w:body></w:document>".encode()


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
    data = docx_with(document(MIXED))
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
    xml = f"{prolog}<w:document {W}><w:body>{MIXED}</w:body></w:document>"  # encoded below, not as UTF-8
    assert extract(docx_with(xml.encode(encoding)), "mixed.docx").text == MIXED_TEXT


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


def test_one_block_too_large_to_hold_is_refused_and_the_same_text_in_many_blocks_is_not() -> None:
    # Word's own limit-free XML can hold a whole book in one paragraph; held as a tree it is ~17x its size.
    runs = [f"<w:r><w:t>{n:x}</w:t></w:r>" for n in range(100_000)]  # ~2.5 MB, too varied to look like a zip bomb
    one = docx_with(document(f"<w:p>{''.join(runs)}</w:p>"))
    with pytest.raises(ExtractionError, match="more than 1 MB of XML"):
        extract(one, "one.docx", limits=Limits(max_block_bytes=1 << 20))
    many = "".join(f"<w:p>{''.join(runs[n : n + 1000])}</w:p>" for n in range(0, len(runs), 1000))
    text = extract(
        docx_with(document(many)),
        "many.docx",
        limits=Limits(max_block_bytes=1 << 20),
    ).text
    assert text.count("\n\n") == 99 and text.endswith("1869f\n")


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
    tab_stops = '<w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr>'  # not a tab in the text
    paragraphs = "".join(f"<w:p>{tab_stops}<w:r><w:t>Box {n}</w:t></w:r></w:p>" for n in ("one", "two"))
    box = f"<w:txbxContent>{paragraphs}</w:txbxContent>"
    body = (
        # Word writes a text box twice: DrawingML in the Choice, VML in the Fallback
        f"<w:p><w:r><w:t>See</w:t></w:r><w:r><mc:AlternateContent><mc:Choice><w:drawing>{box}</w:drawing></mc:Choice>"
        f"<mc:Fallback><w:pict>{box}</w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>"
        # tab stops are w:tab too, in the paragraph's properties: not tabs in its text
        '<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>a</w:t><w:tab/>'
        "<w:t>b PROJ</w:t><w:noBreakHyphen/><w:t>42</w:t></w:r></w:p>"
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
    data = docx_with(document(body, MC, drawing))
    assert extract(data, "boxes.docx").text == (
        "See Box one Box two\n\na\tb PROJ-42\n\nStays\n\nMoved\n\n"
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
    text = extract(docx_with(document(body), **{"word/numbering.xml": NUMBERING.encode()}), "n.docx").text
    assert text == (
        "1. Stop the queue\n  - note the offset\n    1. sub step\n    2. another\n2. Drain it\n"
        "    1. lettered again from one\n\nAn interruption.\n\n3. Restart\n5. From five\n\nNumbering off\n\n"
        "- Unknown list\n1. Styled one\n2. Styled two\n\nIndented prose\n"
    )
    broken = extract(docx_with(document(body), **{"word/numbering.xml": b"<w:numbering"}), "n.docx").text
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
    parts = {"word/_rels/document.xml.rels": rels.encode()}
    text = extract(docx_with(document(body, r), **parts), "links.docx").text
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
    parts = {
        "word/footnotes.xml": notes("footnote", {"1": "Exponential.", "2": "Up to  five   times."}),
        "word/endnotes.xml": notes("endnote", {"1": "See the runbook."}),
    }
    text = extract(docx_with(document(body), **parts), "notes.docx").text
    assert text == (
        "Retries[^1] back off[^2].\n\nAgain[^1][^e1][^3]\n\n[^1]: Up to five times. More.\n"
        "[^2]: Exponential. More.\n[^3]: (missing)\n[^e1]: See the runbook. More.\n"
    )
    damaged = extract(docx_with(document(body), **{"word/footnotes.xml": b"<w:footnotes"}), "notes.docx").text
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
    text = extract(docx_with(document(body, namespaces)), "pictures.docx").text
    assert text == "Flow: [image: Retry sequence]\n\n[image]\n\nBox\n"


def styled(*paragraphs: tuple[str, str]) -> bytes:
    body = "".join(f'<w:p><w:pPr><w:pStyle w:val="{s}"/></w:pPr><w:r><w:t>{t}</w:t></w:r></w:p>' for s, t in paragraphs)
    return document(body)


def test_localised_and_custom_style_ids_are_read_by_their_names() -> None:
    styles = (
        f"<w:styles {W}>"
        '<w:style w:type="paragraph" w:styleId="berschrift1"><w:name w:val="heading 1"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="1"><w:name w:val="heading 2"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="Aufzhlungszeichen"><w:name w:val="List Bullet"/></w:style>'
        '<w:style w:type="paragraph" w:styleId="BodyText"><w:name w:val="Body Text"/></w:style>'
        "</w:styles>"
    ).encode()
    xml = styled(("berschrift1", "Plan"), ("1", "Goals"), ("Aufzhlungszeichen", "one"), ("BodyText", "Prose"))
    text = extract(docx_with(xml, styles=styles), "de.docx").text
    assert text == "# Plan\n\n## Goals\n\n- one\n\nProse\n"


def test_style_ids_that_say_what_they_are_need_no_styles_xml_and_a_damaged_one_loses_no_text() -> None:
    broken = b"<w:styles><unclosed>"
    xml = styled(("Heading2", "Plan"), ("ListBullet2", "deep"), ("Title", "Doc"), ("berschrift1", "Text"))
    assert extract(docx_with(xml, styles=broken), "en.docx").text == "## Plan\n\n  - deep\n\n# Doc\n\nText\n"
