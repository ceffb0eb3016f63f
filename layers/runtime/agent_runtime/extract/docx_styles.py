"""DOCX paragraph styles and the Markdown they give: headings, list items, tables, blank lines between blocks."""

from __future__ import annotations

import contextlib
import functools
import re
from typing import Any, NamedTuple

from .docx_lists import Lists
from .docx_notes import Notes
from .exceptions import ExtractionError
from .markdown import list_depth
from .opc import W, relations
from .safety import Budget, optional_part, parse_xml

_HEADING = re.compile(r"^(?:heading|überschrift|titre|título|titolo)\s*(\d)$", re.IGNORECASE)
_LEVEL = re.compile(r"(\d)$")


class StyleMark(NamedTuple):
    """What a paragraph style says in Markdown."""

    heading: str = ""  # "## " for a heading style, "# " for the title
    depth: int | None = None  # the level of a list style's items
    ordered: bool = False  # a numbered list style ("List Number")


class StyleNames:
    """Style id → name from styles.xml, read on first need: ids such as ``Heading2`` or ``ListBullet`` say what
    they are, and styles.xml (~350 KB in Word's default template) is most of the work on a short document."""

    def __init__(self, archive: Any, budget: Budget) -> None:
        self.archive, self.budget = archive, budget
        self.names: dict[str, str] | None = None
        self._marks: dict[str, StyleMark] = {}

    def mark(self, style_id: str) -> StyleMark:
        """:func:`style_mark` of a style, worked out once per document."""
        if style_id not in self._marks:
            self._marks[style_id] = style_mark(style_id, self)
        return self._marks[style_id]

    def get(self, style_id: str, default: str) -> str:
        if self.names is None:  # a damaged styles.xml costs the heading marks of custom styles
            self.names = optional_part(self.archive, "word/styles.xml", self.budget, _names_in) or {}
        return self.names.get(style_id, default)


@functools.lru_cache(maxsize=16)
def _names_in(raw: bytes) -> dict[str, str]:
    """Style id → name. Cached by content: documents from one template share their styles.xml (read-only use)."""
    names = {}
    for style in parse_xml(raw, "word/styles.xml").iterfind(f"{W}style"):
        name = style.find(f"{W}name")
        if name is not None:
            names[style.get(f"{W}styleId", "")] = name.get(f"{W}val", "")
    return names


def style_mark(style_id: str, styles: StyleNames) -> StyleMark:
    """A paragraph style's Markdown. The id decides when it names a heading, the title or a list (Word's built-in
    ids do); otherwise the style's name does (localised or custom ids: ``berschrift1`` is named "heading 1")."""
    if not style_id:
        return StyleMark()
    return _mark_of(style_id) or _mark_of(styles.get(style_id, style_id)) or StyleMark()


def _mark_of(name: str) -> StyleMark | None:
    name = name.replace("Heading", "heading ").replace("  ", " ").strip()
    lower = name.lower()
    if heading := _HEADING.match(name):
        return StyleMark(heading="#" * min(int(heading.group(1)), 6) + " ")
    if lower == "title":
        return StyleMark(heading="# ")
    # "List Bullet 2" / "ListNumber" / "Bullet List"; not "List Paragraph" or "List Continue" (no marker in Word)
    if "bullet" in lower or ("list" in lower and "number" in lower):
        named = _LEVEL.search(name)
        return StyleMark(depth=max(int(named.group(1)) - 1, 0) if named else 0, ordered="bullet" not in lower)
    return None


class Paragraphs:
    """A document's paragraph formatting: its styles, lists, links and notes."""

    def __init__(self, archive: Any, budget: Budget) -> None:
        self.archive, self.budget = archive, budget
        self.styles = StyleNames(archive, budget)
        self.lists = Lists(archive, budget)
        self.notes = Notes(archive, budget)
        self.links: dict[str, str] | None = None

    def link(self, rid: str | None, anchor: str | None) -> str | None:
        """The web or mail address a hyperlink's relationship names (with its anchor); None for any other link."""
        if not rid:
            return None
        if self.links is None:
            self.links = {}
            with contextlib.suppress(ExtractionError):  # a damaged relationships part costs the addresses only
                self.links = relations(self.archive, "word/document.xml", self.budget)[1]
        if (url := self.links.get(rid)) is None:
            return None
        return url + f"#{anchor}" if anchor else url

    def block(self, text: str, style_id: str, num_id: str | None, level: str | None) -> str:
        """A non-empty paragraph as Markdown: heading styles win, then the paragraph's own numbering, then its
        style's list (at the paragraph's own level if it has one). ``num_id`` "0" switches numbering off."""
        mark = self.styles.mark(style_id)
        if mark.heading:
            return mark.heading + text
        if num_id == "0":
            return text
        if num_id:
            return self.lists.numbered(num_id, level) + text
        if mark.depth is not None:
            depth = list_depth(level) if level is not None else mark.depth
            return self.lists.styled(f"style:{style_id}", depth, mark.ordered) + text
        if num_id is not None or level is not None:  # numbering that names no list: an item all the same
            return self.lists.styled("", list_depth(level), ordered=False) + text
        return text
