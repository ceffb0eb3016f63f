"""The lexical stage: BM25 over what a deferred tool says of itself — its name (``github_list_commits`` and
``listCommits`` split into words), its description and its parameters' names.

Plain BM25 (k1 1.2, b 0.75, Lucene's idf) on a catalogue of a few hundred short documents is a few microseconds a
query and needs nothing beyond the standard library (numpy is not in the runtime's layer). It finds the tools whose
words the request shares; what it cannot find — a request that shares no word with its tool — is the chooser's.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

K1, B = 1.2, 0.75
NAME_WEIGHT = 2  # a word of the tool's name counts as much as two of its description
_WORD = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
# Words that say nothing about which tool fits (English function words, and what every tool says of itself).
_STOP = (
    "a about an and any are as at be by can do does for from get has have how i if in into is it its me my of on or "
    "our please so that the their them then there these this those to up us use used using via was we what when where "
    "which who will with you your tool tools s t d ll m re ve"  # the last: what contractions leave
)
STOP_WORDS = frozenset(_STOP.split())


def words(text: str) -> list[str]:
    """Lowercase words, camelCase and snake_case split, stop words out, a light stem (plural and -ing/-ed
    endings) so that "commits" finds "commit" and "labelled" finds "label"."""
    return [_stem(w) for w in (m.lower() for m in _WORD.findall(text)) if w not in STOP_WORDS]


def _stem(word: str) -> str:
    if len(word) <= 3:
        return word
    for suffix, keep in (("ies", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            word = word[: -len(suffix)] + keep
            break
    return word[:-1] if len(word) > 4 and word[-1] == word[-2] and word[-1] not in "aeiouls" else word


@dataclass(frozen=True, slots=True)
class Entry:
    """What the lexical stage knows of one deferred tool (or skill)."""

    name: str
    description: str
    parameters: tuple[str, ...] = ()
    kind: str = "tool"  # or "skill"
    group: str = ""  # its toolset (an MCP server's name, python, builtin)

    def text(self) -> str:
        return f"{self.name} {self.description} {' '.join(self.parameters)}"


class Bm25:
    """An index built once per agent (the catalogue is fixed for a run); queried per search."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        self.entries = list(entries)
        self._docs = [_document(entry) for entry in self.entries]
        self._lengths = [sum(doc.values()) for doc in self._docs]
        self._average = (sum(self._lengths) / len(self._lengths)) if self._lengths else 1.0
        frequency: Counter[str] = Counter(word for doc in self._docs for word in doc)
        n = len(self._docs)
        self._idf = {word: math.log(1 + (n - df + 0.5) / (df + 0.5)) for word, df in frequency.items()}

    def search(self, query: str, limit: int) -> list[tuple[Entry, float]]:
        """The best ``limit`` entries for ``query``, best first; those sharing no word with it are left out."""
        terms = set(words(query))
        scored = []
        for index, doc in enumerate(self._docs):
            score = sum(self._term(term, doc, self._lengths[index]) for term in terms if term in doc)
            if score > 0:
                scored.append((score, index))
        scored.sort(key=lambda item: (-item[0], item[1]))
        return [(self.entries[index], round(score, 4)) for score, index in scored[:limit]]

    def _term(self, term: str, doc: Counter[str], length: int) -> float:
        count = doc[term]
        norm = count + K1 * (1 - B + B * length / self._average)
        return self._idf[term] * count * (K1 + 1) / norm


def _document(entry: Entry) -> Counter[str]:
    parts: Iterable[str] = [*([entry.name] * NAME_WEIGHT), entry.description, *entry.parameters]
    return Counter(word for part in parts for word in words(part))
