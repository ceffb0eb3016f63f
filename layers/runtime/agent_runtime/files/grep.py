"""file_regex's engine: a file searched as grep searches it, with every cost bounded.

Patterns are vetted before they are compiled (the ``regex`` module expands counted repeats when compiling:
``(?:(?:a{1000}){1000}){1000}`` asks for gigabytes first); a search has a time limit per line (catastrophic
backtracking happens within a line) and per scan (never past the run's deadline); the file is read in large
chunks, one search per chunk finding the next candidate line, so memory stays bounded and a 100 MB log is
scanned at grep's pace. Results equal a line-by-line scan's (tests/unit/test_file_regex_scan.py).
"""

from __future__ import annotations

import re
import re._constants as sre_constants  # the stdlib's own regex parser: sizes a pattern before compiling
import re._parser as sre_parse
import time
from collections import deque
from typing import Any

import regex

from ..errors import ToolError
from ..run_context import RunContext

REGEX_LINE_LIMIT = 2.0  # catastrophic backtracking happens within a line: stop such a search
REGEX_TOTAL_LIMIT = 120.0  # a whole scan, so a 100 MB file fits; never past the run's deadline
SCAN_CHUNK_BYTES = 4 << 20  # file_regex reads and searches this much at a time
_CR = re.compile(r"\r+\n")
_LINE_ONLY = re.compile(r"\\[AZzG]|\(\?<[=!]|\(\?[a-zA-Z]*-[a-zA-Z]*m")
MAX_PATTERN_CHARS = 2_000
MAX_PATTERN_SIZE = 50_000  # nodes after counted repeats are expanded: tens of MB at most to compile
_COUNTED = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


Row = tuple[int, str, int]  # line number, text, where the match starts (-1: a context line)


class Collector:
    """Matching lines and their context, fed line by line, merged into blocks as ``grep -C`` does."""

    def __init__(self, max_matches: int, context: int) -> None:
        self.max, self.before = max_matches, deque[Row](maxlen=context)
        self.context, self.after, self.matches, self.scanned = context, 0, 0, 0
        self.blocks: list[list[Row]] = []

    @property
    def done(self) -> bool:
        return self.matches >= self.max and self.after == 0

    def line(self, number: int, line: str, at: int) -> None:
        self.scanned = number
        if at >= 0:
            self.matches += 1
            rows = [*self.before, (number, line, at)]
            self.before.clear()
            if self.blocks and self.blocks[-1][-1][0] >= rows[0][0] - 1:  # touches the previous block: extend it
                self.blocks[-1].extend(row for row in rows if row[0] > self.blocks[-1][-1][0])
            else:
                self.blocks.append(rows)
            self.after = self.context
        elif self.after > 0:
            self.blocks[-1].append((number, line, -1))
            self.after -= 1
        else:
            self.before.append((number, line, -1))


def scan(
    ctx: RunContext, file_id: str, compiled: regex.Pattern[str], max_matches: int, context: int
) -> tuple[list[list[Row]], int, int]:
    """grep's way: large chunks, one search over each, and only the lines where it lands are looked at again
    (alone, with the per-line time limit). A chunk match that spans lines finds nothing in its first line and
    the search goes on after it; patterns that see a line's surroundings (\\A, \\Z, lookbehind) are searched line
    by line throughout. Results are those of a line-by-line scan: matches, numbers, context, max_matches."""
    deadline = time.monotonic() + min(REGEX_TOTAL_LIMIT, max(ctx.deadline.remaining(), 0.001))
    found = Collector(max_matches, context)
    scan = _Chunks(compiled, _block_pattern(compiled), found, deadline)
    size, consumed, pending = ctx.files.meta(file_id).size_bytes, 0, b""
    for chunk in ctx.files.iter_chunks(file_id, chunk_size=SCAN_CHUNK_BYTES):
        data = pending + chunk
        cut = data.rfind(b"\n")
        if cut < 0:  # one line longer than a chunk: keep reading (iter_lines would hold it whole too)
            pending = data
            continue
        pending, consumed = data[cut + 1 :], consumed + cut + 1
        scan.text(data[: cut + 1].decode("utf-8", errors="replace"))
        if found.done:  # a line-by-line scan stops on the line after the last one it needed
            more = consumed < size or scan.next_line <= scan.fed
            return found.blocks, found.matches, scan.next_line if more else found.scanned
    if pending:
        scan.text(pending.decode("utf-8", errors="replace") + "\n")
    return found.blocks, found.matches, found.scanned


class _Chunks:
    """Feeds whole chunks (complete lines) to the collector: candidate lines found by one search each."""

    def __init__(
        self, line: regex.Pattern[str], block: regex.Pattern[str] | None, found: Collector, deadline: float
    ) -> None:
        self.line, self.block, self.found, self.deadline = line, block, found, deadline
        self.next_line = 1
        self.fed = 0  # lines handed over so far

    def text(self, text: str) -> None:
        self.fed += text.count("\n")
        if self.block is not None and "\r" in text:
            text = _CR.sub("\n", text)  # line ends as the line scan sees them (it strips trailing \r)
        pos, found = 0, self.found
        while pos < len(text) and not found.done:
            hit = self._candidate(text, pos) if found.matches < found.max else None
            if hit is None or hit >= len(text):  # at the very end: the empty "line" after the last newline
                self._gap(text, pos, len(text))
                return
            start = text.rfind("\n", 0, hit) + 1
            end = text.index("\n", hit)
            self._gap(text, pos, start)
            if found.done:
                return
            line = text[start:end].rstrip("\r")
            found.line(self.next_line, line, _search(self.line, line, self.deadline, self.next_line))
            self.next_line, pos = self.next_line + 1, end + 1

    def _candidate(self, text: str, pos: int) -> int | None:
        """Where the next line that may match is (its offset in ``text``), or None."""
        if self.block is None:
            return pos  # every line is a candidate
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            raise ToolError(
                f"the scan ran out of time at line {self.next_line:,}: search a smaller file or a narrower pattern"
            )
        try:
            match = self.block.search(text, pos, timeout=min(REGEX_LINE_LIMIT, remaining))
        except TimeoutError:
            return pos  # look at this line alone: its own limit names it, or it is fine
        return None if match is None else match.start()

    def _gap(self, text: str, start: int, end: int) -> None:
        """Lines in ``text[start:end]`` that do not match: context after the last match and before the next."""
        found, lines = self.found, text.count("\n", start, end)
        if not lines:
            return
        taken, pos = 0, start
        while found.after > 0 and taken < lines:  # context after a match, one line at a time
            stop = text.index("\n", pos)
            found.line(self.next_line + taken, text[pos:stop].rstrip("\r"), -1)
            taken, pos = taken + 1, stop + 1
        if found.done:
            self.next_line += taken
            return
        keep = min(found.before.maxlen or 0, lines - taken)
        if keep:
            tail = text[pos : end - 1].rsplit("\n", keep)[-keep:]
            first = self.next_line + lines - keep
            found.before.extend((first + i, line.rstrip("\r"), -1) for i, line in enumerate(tail))
        self.next_line += lines
        found.scanned = self.next_line - 1


def _block_pattern(compiled: regex.Pattern[str]) -> regex.Pattern[str] | None:
    """The pattern for whole chunks (^ and $ at every line), or None when a line's surroundings matter."""
    if _LINE_ONLY.search(compiled.pattern):
        return None
    return regex.compile(compiled.pattern, compiled.flags | regex.MULTILINE)


def compile_pattern(pattern: str, ignore_case: bool) -> regex.Pattern[str]:
    """Vetted before it is compiled: the ``regex`` module expands counted repeats when compiling, so a short
    pattern like ``(?:(?:a{1000}){1000}){1000}`` asks for gigabytes before any time limit applies."""
    if len(pattern) > MAX_PATTERN_CHARS:
        raise ToolError(f"the pattern is {len(pattern):,} characters; at most {MAX_PATTERN_CHARS:,}")
    size = expanded_size(pattern)
    if size > MAX_PATTERN_SIZE:
        raise ToolError(
            f"the pattern's counted repeats multiply to about {size:,} steps (at most {MAX_PATTERN_SIZE:,}): "
            "nest fewer {n} repeats, or use + and * instead"
        )
    try:
        return regex.compile(pattern, regex.IGNORECASE if ignore_case else 0)
    except regex.error as error:
        raise ToolError(f"invalid pattern {pattern!r}: {error}") from None


def expanded_size(pattern: str) -> int:
    """About how many nodes compiling ``pattern`` creates: counted repeats multiply what they repeat. Syntax
    only the ``regex`` module knows falls back to multiplying every counted bound in the text (an overestimate
    for repeats side by side, never an underestimate)."""
    try:
        return _tree_size(sre_parse.parse(pattern))
    except Exception:
        size = 1
        for low, high in _COUNTED.findall(pattern):
            size *= max(int(high or low or 1), 1)
            if size > MAX_PATTERN_SIZE:
                break
        return size


def _tree_size(parsed: Any) -> int:
    total = 0
    for op, value in parsed:
        if op in _REPEATS:
            low, high, inner = value
            total += max(low if high == sre_constants.MAXREPEAT else high, 1) * _tree_size(inner)
        elif op is sre_constants.SUBPATTERN:
            total += _tree_size(value[-1])
        elif op is sre_constants.BRANCH:
            total += sum(_tree_size(branch) for branch in value[1])
        elif op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
            total += _tree_size(value[1])
        elif op is sre_constants.ATOMIC_GROUP:
            total += _tree_size(value)
        else:
            total += 1
        if total > MAX_PATTERN_SIZE:
            return total
    return total


def _search(compiled: regex.Pattern[str], line: str, deadline: float, number: int) -> int:
    """Where the pattern first matches in ``line`` (-1: nowhere)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise ToolError(f"the scan ran out of time at line {number:,}: search a smaller file or a narrower pattern")
    try:
        found = compiled.search(line, timeout=min(REGEX_LINE_LIMIT, remaining))
    except TimeoutError:
        if remaining < REGEX_LINE_LIMIT:  # the whole scan's limit, not the line's
            raise ToolError(
                f"the scan ran out of time at line {number:,}: search a smaller file or a narrower pattern"
            ) from None
        raise ToolError(
            f"the pattern ran past the {REGEX_LINE_LIMIT:g} s limit on line {number:,} "
            "(catastrophic backtracking): simplify it, e.g. avoid nested alternatives like (a|aa)+"
        ) from None
    return -1 if found is None else found.start()
