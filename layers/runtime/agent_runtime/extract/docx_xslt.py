"""DOCX body → blocks in one XSLT pass (libxslt, in C): the fast path for document parts up to 16 MB.

Produces exactly what the streamed path in ``docx.py`` produces; the XSLT only walks the tree and marks block,
prefix, table, row and cell boundaries with private-use characters, and Python assembles the Markdown.
"""

from __future__ import annotations

import functools
from typing import Any

from .docx import W, style_prefixes, table_markdown
from .safety import parse_xml

BUILT_IN = {f"Heading{n}" for n in range(1, 10)} | {"Title"}
BUILT_IN |= {f"{kind}{n}" for kind in ("ListBullet", "ListNumber", "ListParagraph") for n in ("", 2, 3, 4, 5)}
BLOCK, TABLE, ROW, CELL, TEXT = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004"

STYLESHEET = """<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
  <xsl:output method="text" encoding="utf-8"/>
  <xsl:param name="heads"/>
  <xsl:param name="lists"/>
  <xsl:variable name="spaces" select="'                                                  '"/>
  <xsl:template match="/"><xsl:apply-templates select="w:document/w:body"/></xsl:template>
  <xsl:template match="w:body|w:sdt|w:sdtContent|w:customXml">
    <xsl:apply-templates select="w:p|w:tbl|w:sdt|w:sdtContent|w:customXml"/>
  </xsl:template>
  <xsl:template match="w:p">
    <xsl:variable name="key" select="concat('|', w:pPr/w:pStyle/@w:val, '=')"/>
    <xsl:variable name="head" select="substring-before(substring-after($heads, $key), '|')"/>
    <xsl:variable name="list" select="substring-before(substring-after($lists, $key), '|')"/>
    <xsl:text>&#57344;</xsl:text>
    <xsl:choose>
      <xsl:when test="w:pPr/w:pStyle and $head"><xsl:value-of select="$head"/></xsl:when>
      <xsl:when test="w:pPr/w:numPr/w:ilvl">
        <xsl:value-of select="substring($spaces, 1, 2 * number(w:pPr/w:numPr/w:ilvl/@w:val))"/>
        <xsl:text>- </xsl:text>
      </xsl:when>
      <xsl:when test="w:pPr/w:pStyle and $list"><xsl:value-of select="$list"/></xsl:when>
      <xsl:when test="w:pPr/w:numPr"><xsl:text>- </xsl:text></xsl:when>
    </xsl:choose>
    <xsl:text>&#57348;</xsl:text>
    <xsl:apply-templates select="*" mode="text"/>
  </xsl:template>
  <xsl:template match="w:tbl">
    <xsl:text>&#57344;&#57345;</xsl:text>
    <xsl:for-each select="w:tr">
      <xsl:text>&#57346;</xsl:text>
      <xsl:for-each select="w:tc">
        <xsl:text>&#57347;</xsl:text>
        <xsl:apply-templates select="*" mode="text"/>
      </xsl:for-each>
    </xsl:for-each>
  </xsl:template>
  <xsl:template match="*" mode="text"><xsl:apply-templates select="*" mode="text"/></xsl:template>
  <xsl:template match="w:t" mode="text"><xsl:value-of select="."/></xsl:template>
  <xsl:template match="w:tab" mode="text"><xsl:text>&#9;</xsl:text></xsl:template>
  <xsl:template match="w:br|w:cr" mode="text"><xsl:text>&#10;</xsl:text></xsl:template>
</xsl:stylesheet>"""


@functools.cache
def _compiled() -> Any:
    from lxml import etree

    return etree.XSLT(etree.XML(STYLESHEET.encode()), access_control=etree.XSLTAccessControl.DENY_ALL)


def transform(raw: bytes, styles: dict[str, str]) -> list[str]:
    """The document's blocks (paragraphs and tables as Markdown), empty ones dropped."""
    from lxml import etree

    tree = parse_xml(raw)
    heads, lists = _prefix_tables(tree, styles)
    text = str(_compiled()(tree, heads=etree.XSLT.strparam(heads), lists=etree.XSLT.strparam(lists)))
    blocks = []
    for block in text.split(BLOCK)[1:]:
        if block.startswith(TABLE):
            rows = [row.split(CELL)[1:] for row in block.split(ROW)[1:]]
            blocks.append(table_markdown(rows))
            continue
        prefix, _, body = block.partition(TEXT)
        body = body.strip()
        if body:
            blocks.append(prefix + body)
    return [block for block in blocks if block]


def _prefix_tables(tree: Any, styles: dict[str, str]) -> tuple[str, str]:
    """``|styleId=prefix|...`` lookup strings for every paragraph style the body uses (the XSLT's tables)."""
    # Every style styles.xml defines plus Word's built-in ids (cheap); only without styles.xml, the ids the body
    # uses (a scan of the tree), so an id used but never defined is read from its name as on the streamed path.
    used = set(styles) | BUILT_IN if styles else set(tree.xpath("//w:pPr/w:pStyle/@w:val", namespaces={"w": W[1:-1]}))
    heads, lists = [], []
    for style_id in used:
        if "|" in style_id or "=" in style_id:
            continue  # cannot be a key in the lookup string: such a paragraph is plain text on this path
        head, listed = style_prefixes(style_id, styles)
        if head:
            heads.append(f"{style_id}={head}")
        elif listed:
            lists.append(f"{style_id}={listed}")
    return "|" + "|".join(heads) + "|", "|" + "|".join(lists) + "|"
