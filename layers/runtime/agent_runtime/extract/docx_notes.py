"""DOCX footnotes and endnotes as Markdown footnotes: ``[^1]`` where the note is referenced, and the notes' text
after the body (``[^1]: …``), read from footnotes.xml / endnotes.xml only when the body refers to them."""

from __future__ import annotations

from typing import Any

from .opc import W
from .safety import Budget, optional_part, parse_xml

FOOTNOTE, ENDNOTE = f"{W}footnoteReference", f"{W}endnoteReference"
# reference tag → (part, note tag, label prefix): endnotes are labelled apart so both can be numbered from 1
KINDS = {
    FOOTNOTE: ("word/footnotes.xml", f"{W}footnote", ""),
    ENDNOTE: ("word/endnotes.xml", f"{W}endnote", "e"),
}


class Notes:
    """The notes a document's body refers to, in the order of their first reference."""

    def __init__(self, archive: Any, budget: Budget) -> None:
        self.archive, self.budget = archive, budget
        self.referenced: dict[str, dict[str, str]] = {tag: {} for tag in KINDS}  # tag → note id → label

    def mark(self, tag: str, note_id: str | None) -> str:
        """The Markdown reference for a w:footnoteReference or w:endnoteReference."""
        if not note_id:
            return ""
        labels = self.referenced[tag]
        label = labels.setdefault(note_id, f"{KINDS[tag][2]}{len(labels) + 1}")
        return f"[^{label}]"

    def block(self) -> str:
        """The referenced notes' text, one ``[^label]: text`` line each; empty if none were referenced."""
        lines = []
        for tag, labels in self.referenced.items():
            if labels:
                texts = self._texts(*KINDS[tag][:2])
                lines += [f"[^{label}]: {texts.get(note_id, '(missing)')}" for note_id, label in labels.items()]
        return "\n".join(lines)

    def _texts(self, part: str, note_tag: str) -> dict[str, str]:
        """Note id → its text on one line. A missing or damaged part costs the notes' text, not the document's."""

        def texts(raw: bytes) -> dict[str, str]:
            return {note.get(f"{W}id", ""): _one_line(note) for note in parse_xml(raw, part).iterfind(note_tag)}

        return optional_part(self.archive, part, self.budget, texts) or {}


def _one_line(note: Any) -> str:
    paragraphs = ("".join(t.text or "" for t in p.iter(f"{W}t")) for p in note.iterfind(f"{W}p"))
    return " ".join(" ".join(paragraph.split()) for paragraph in paragraphs if paragraph.strip())
