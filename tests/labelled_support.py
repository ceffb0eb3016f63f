"""A message that gives a tool several values by their parameters' names, in any order and label style, in one
sentence: ``ticket=PAY-816 text=hello``, ``text: done, ticket: PAY-818``, ``with service billing-api and team
payments``, ``level "2"``. The demo model's direct calls read each value up to where the next label begins."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

WORDS = ["the", "fix", "is", "in", "shipped", "today", "billing-api", "payments", "v2.1", "PAY-816", "#ops"]
KEY = re.compile(r"[A-Z][A-Z0-9]*-\d+")
TAKEN = {"with", "and", "call", "use", "please"} | {part for w in WORDS for part in re.findall(r"[a-z]+", w.lower())}
NAME = st.from_regex(r"[a-z]{3,8}(_[a-z]{2,6})?", fullmatch=True).filter(lambda n: not set(n.split("_")) & TAKEN)
VALUE = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(" ".join)
MARKED = ["{p}={v}", "{p} = {v}", "{p}: {v}", "{p}:{v}", "{p}: `{v}`"]  # a label a value before it ends at
QUOTED = ['{p} "{v}"', "{p}: `{v}`"]
BARE = "{p} {v}"  # after "with", "and" or a comma: its value is the words up to the next label


@dataclass(frozen=True)
class Labelled:
    message: str
    values: dict[str, str]  # the call's arguments the message gives

    def parameters(self) -> dict[str, Any]:
        properties = {p: {"type": "string"} for p in sorted(self.values)}
        return {"type": "object", "properties": properties, "required": sorted(self.values)}


@st.composite
def labelled(draw: st.DrawFn, tool: str) -> Labelled:
    """Two to four values, each in a drawn style, joined by " and ", ", " or, where the next one's label ends the
    value before it, a space. A bare value that starts with a key is that key ("ticket PAY-816" reads as a key
    however it goes on, as a person would read it)."""
    names = draw(st.lists(NAME.filter(lambda n: n != tool), min_size=2, max_size=4, unique=True))
    styles = [draw(st.sampled_from([*MARKED, *QUOTED, BARE])) for _ in names]
    values = {n: draw(VALUE) for n in names}
    message, ends = draw(st.sampled_from(["call {t}", "please use {t}", "{t}"])).format(t=tool), False
    for index, (name, style) in enumerate(zip(names, styles, strict=True)):
        if style == BARE and KEY.match(values[name]):
            values[name] = values[name].split()[0]
        spaced = style in MARKED or (index > 0 and styles[index - 1] in QUOTED and style != BARE)
        joins = [" with "] if index == 0 else [" and ", ", ", *([" "] if spaced else [])]
        message += draw(st.sampled_from(joins if style == BARE or index else [" with ", " "]))
        message += style.format(p=name, v=values[name])
        ends = style in QUOTED or style == BARE
    return Labelled(message + (draw(st.sampled_from(["", "."])) if ends else ""), values)
