"""Reading untrusted containers safely: zip parts with hard size caps, XML with no entities and no network."""

from __future__ import annotations

import contextlib
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any, TypeVar

from .exceptions import ExtractionError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Limits:
    max_part_bytes: int = 100 * 2**20  # one decompressed zip part
    # XML of one DOCX paragraph or table: held as a tree (~17x its size) until it ends, so bounded apart
    max_block_bytes: int = 24 * 2**20
    max_total_bytes: int = 300 * 2**20  # all parts read from one archive
    max_ratio: int = 200  # compression ratio beyond which a part is treated as a bomb
    max_pages: int = 1_000  # PDF pages extracted; the rest is reported, not read
    max_rows: int = 2_000  # table rows (CSV, XLSX)
    max_seconds: float = 60.0
    max_chars: int = 20_000_000


class Budget:
    """Counts decompressed bytes and elapsed time across one extraction."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.read = 0
        self.deadline = time.monotonic() + limits.max_seconds

    def check_time(self, where: str) -> None:
        if time.monotonic() > self.deadline:
            raise ExtractionError(
                f"extraction took longer than {self.limits.max_seconds:g} s ({where}); "
                "the document is too large or too complex"
            )


def read_part(archive: zipfile.ZipFile, name: str, budget: Budget) -> bytes:
    """A zip member, decompressed with a hard cap."""
    return b"".join(read_chunks(archive, name, budget, 1 << 20))


def read_chunks(archive: zipfile.ZipFile, name: str, budget: Budget, size: int) -> Iterator[bytes]:
    """A zip member decompressed ``size`` bytes at a time, with a hard cap (headers can lie, so the count is of
    bytes actually read)."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise ExtractionError(f"the document has no {name} part: it is damaged or not this format") from None
    limits = budget.limits
    if info.compress_size and info.file_size / max(info.compress_size, 1) > limits.max_ratio:
        raise ExtractionError(f"{name} expands {info.file_size // max(info.compress_size, 1)}x: refused as a zip bomb")
    read = 0
    try:
        with archive.open(info) as stream:
            while chunk := stream.read(size):
                read += len(chunk)
                budget.read += len(chunk)
                if read > limits.max_part_bytes or budget.read > limits.max_total_bytes:
                    raise ExtractionError(f"{name} decompresses past the size limit: refused as a zip bomb")
                yield chunk
    except (zipfile.BadZipFile, EOFError, OSError, ValueError) as error:
        raise ExtractionError(f"{name} is corrupt or truncated: {error}") from None


def optional_part(archive: zipfile.ZipFile, name: str, budget: Budget, convert: Callable[[bytes], T]) -> T | None:
    """A part the document can do without (styles, numbering, notes), converted; None when it is missing or
    damaged: it costs what it would have added, not the document's text."""
    if name in archive.namelist():
        with contextlib.suppress(ExtractionError):
            return convert(read_part(archive, name, budget))
    return None


# Entities, DTDs and network access off, libxml2's depth and size limits on, comments dropped. The xml:id index
# (collect_ids) is off where a whole part is parsed: nothing here looks ids up, and it costs ~10 % of a parse.
SAFE_PARSING = {
    "resolve_entities": False,
    "load_dtd": False,
    "no_network": True,
    "huge_tree": False,
    "remove_comments": True,
}


@contextlib.contextmanager
def xml_errors(what: str = "the document's XML") -> Iterator[None]:
    """lxml's syntax errors (malformed, too deep, entity tricks) as a clear extraction error about ``what``."""
    from lxml import etree

    try:
        yield
    except etree.XMLSyntaxError as error:
        raise ExtractionError(f"{what} is invalid or hostile: {error}") from None


def iterparse(source: IO[bytes], tags: tuple[str, ...]) -> Iterator[tuple[str, Any]]:
    """lxml iterparse with entities, DTDs and network access off, and libxml2's depth limit on."""
    from lxml import etree

    with xml_errors():
        yield from etree.iterparse(source, events=("end",), tag=tags, **SAFE_PARSING)


def parse_xml(raw: bytes, what: str = "the document's XML") -> Any:
    """A whole XML part, with the same protections as :func:`iterparse`."""
    from lxml import etree

    with xml_errors(what):
        return etree.fromstring(raw, etree.XMLParser(**SAFE_PARSING, collect_ids=False))


class FeedParser:
    """A part parsed piece by piece with the same protections, its root element handed out as soon as it starts.

    lxml shows a tree being built only through parse events, and element events cost a call back into Python per
    element (~20 % more work for the whole parse). So a processing instruction is slipped in before the root
    element, after the XML declaration: it is the one event, and the element after it is the root. Where it cannot
    be placed (no ASCII-compatible start within 4 KB), the root comes with :meth:`close`. Wrap calls in
    :func:`xml_errors`."""

    def __init__(self) -> None:
        from lxml import etree

        self.parser = etree.XMLPullParser(events=("pi",), **SAFE_PARSING, collect_ids=False)
        self.head: bytes | None = b""  # the start, kept until the mark's place is known; None once fed
        self.marker: Any = None
        self._root: Any = None

    def feed(self, piece: bytes) -> None:
        if self.head is None:
            self.parser.feed(piece)
            return
        self.head += piece
        place = _mark_place(self.head)
        if place is not None or len(self.head) > 4096:
            head, self.head = self.head, None
            self.parser.feed(head[:place] + _MARK + head[place:] if place is not None and place >= 0 else head)

    def root(self) -> Any:
        """The root element once it has started (partly built until :meth:`close`), else None."""
        if self._root is None:
            if self.marker is None:
                self.marker = next((pi for _, pi in self.parser.read_events()), None)
            node = self.marker.getnext() if self.marker is not None else None
            while node is not None and not isinstance(node.tag, str):  # other processing instructions
                node = node.getnext()
            self._root = node
        return self._root

    def close(self) -> Any:
        if self.head is not None:
            self.parser.feed(self.head)
            self.head = None
        return self.parser.close()


_MARK = b"<?agent-runtime?>"


def _mark_place(head: bytes) -> int | None:
    """Where the mark goes: after the XML declaration, or at the start if there is none; -1 where it cannot go
    (another encoding); None while more of the start is needed to tell."""
    start = 3 if head.startswith(b"\xef\xbb\xbf") else 0
    if len(head) < start + 5:
        return None
    if head.startswith(b"<?xml", start):
        end = head.find(b"?>", start)
        return end + 2 if end >= 0 else None
    return start if head.startswith(b"<", start) else -1
