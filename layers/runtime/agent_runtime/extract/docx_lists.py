"""DOCX list items as Markdown markers: "- " for bullets, "3. " for the third item of a numbered list.

A paragraph is numbered directly (its own w:numPr: a list instance w:numId and a level w:ilvl, whose format and
start are in numbering.xml) or through its style ("List Number 2"). Items are counted per list and level in
document order, as Word does: a list carries on after the paragraphs that interrupt it, and an item resets the
count of the levels below it.
"""

from __future__ import annotations

from typing import Any

from .markdown import MAX_DEPTH, list_depth
from .opc import W
from .safety import Budget, optional_part, parse_xml

UNORDERED = ("bullet", "none", "")


class Lists:
    """Markers for the list items of one document, in document order. numbering.xml is read on first need."""

    def __init__(self, archive: Any, budget: Budget) -> None:
        self.archive, self.budget = archive, budget
        self.levels: dict[str, dict[int, tuple[str, int]]] | None = None  # numId → level → (format, start)
        self.counts: dict[str, list[int]] = {}

    def numbered(self, num_id: str, level: str | None) -> str:
        """The marker of a directly numbered item, indented by its level."""
        depth = list_depth(level)
        if self.levels is None:  # a damaged numbering.xml costs the numbers: items become bullets
            self.levels = optional_part(self.archive, "word/numbering.xml", self.budget, _levels_in) or {}
        kind, start = self.levels.get(num_id, {}).get(depth, ("bullet", 1))
        return self.styled(f"num:{num_id}", depth, kind not in UNORDERED, start)

    def styled(self, key: str, depth: int, ordered: bool, start: int = 1) -> str:
        """The marker of the next item at ``depth`` of the list ``key``, indented."""
        counts = self.counts.setdefault(key, [0] * (MAX_DEPTH + 1))
        counts[depth] = counts[depth] + 1 if counts[depth] else start
        counts[depth + 1 :] = [0] * (MAX_DEPTH - depth)
        return "  " * depth + (f"{counts[depth]}. " if ordered else "- ")


def _levels_in(raw: bytes) -> dict[str, dict[int, tuple[str, int]]]:
    """numId → level → (number format, start), through each list instance's abstract definition and overrides."""
    root = parse_xml(raw, "word/numbering.xml")
    abstract = {
        definition.get(f"{W}abstractNumId", ""): {
            list_depth(level.get(f"{W}ilvl")): (_val(level, "numFmt", "decimal"), _start(_val(level, "start", "1")))
            for level in definition.iterfind(f"{W}lvl")
        }
        for definition in root.iterfind(f"{W}abstractNum")
    }
    lists = {}
    for instance in root.iterfind(f"{W}num"):
        levels = dict(abstract.get(_val(instance, "abstractNumId", ""), {}))
        for override in instance.iterfind(f"{W}lvlOverride"):
            depth = list_depth(override.get(f"{W}ilvl"))
            if (start := _val(override, "startOverride", "")) and depth in levels:
                levels[depth] = (levels[depth][0], _start(start))
        lists[instance.get(f"{W}numId", "")] = levels
    return lists


def _val(element: Any, child: str, default: str) -> str:
    found = element.find(f"{W}{child}")
    return found.get(f"{W}val", default) if found is not None else default


def _start(value: str) -> int:
    return int(value) if value.isascii() and value.isdigit() and len(value) < 7 else 1
