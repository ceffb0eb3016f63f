"""File tools the model always has: ``file_read`` and ``file_regex``.

Both stream the file (memory stays bounded whatever its size), check the context budget before answering, and
record what was shown in the run's read ledger (the coverage map in the status message).
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
from ..tools import Tool, tool
from .exceptions import FileRangeError

MAX_CHARS_WITHOUT_LEDGER = 60_000  # when no context engine runs (bare Agent), keep reads modest
MAX_LINE_CHARS = 2_000  # a line longer than this is cut in file_regex output
MIN_LINE_CHARS = 160  # cut no narrower when fitting the budget: drop blocks instead ...
MIN_MATCH_CHARS = 40  # ... but the one block left is cut down to this around its match
MAX_BYTES_PER_TOKEN = 16  # a token is rarely more: never load more than the budget could show
REGEX_LINE_LIMIT = 2.0  # catastrophic backtracking happens within a line: stop such a search
REGEX_TOTAL_LIMIT = 120.0  # a whole scan, so a 100 MB file fits; never past the run's deadline
MAX_MATCHES = 200
SCAN_CHUNK_BYTES = 4 << 20  # file_regex reads and searches this much at a time
# What a chunk search cannot answer for a line alone: \A \Z \z \G, lookbehind, multiline turned off.
_CR = re.compile(r"\r+\n")
_LINE_ONLY = re.compile(r"\\[AZzG]|\(\?<[=!]|\(\?[a-zA-Z]*-[a-zA-Z]*m")
MAX_PATTERN_CHARS = 2_000
MAX_PATTERN_SIZE = 50_000  # nodes after counted repeats are expanded: tens of MB at most to compile
_COUNTED = re.compile(r"\{(\d*)(?:,(\d*))?\}")
_REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, sre_constants.POSSESSIVE_REPEAT)


def _budget(ctx: RunContext) -> int | None:
    return None if ctx.ledger is None else ctx.ledger.remaining_tokens()


def _limit(ctx: RunContext) -> int:
    """What one read may add: tokens with a context engine, characters without one."""
    budget = _budget(ctx)
    return MAX_CHARS_WITHOUT_LEDGER if budget is None else budget


def _cost(ctx: RunContext, text: str) -> int:
    return len(text) if ctx.ledger is None else ctx.ledger.count(text)


def fits_budget(ctx: RunContext, text: str) -> tuple[bool, int]:
    if ctx.ledger is None:
        return len(text) <= MAX_CHARS_WITHOUT_LEDGER, len(text) // 4
    tokens = ctx.ledger.count(text)
    return tokens <= ctx.ledger.remaining_tokens(), tokens


@tool(offload=False)
def file_read(
    ctx: RunContext,
    id: str,
    start_line: int | None = None,
    end_line: int | None = None,
    start_byte: int | None = None,
    end_byte: int | None = None,
) -> str:
    """Read a file from this run's files list: the whole file, a line range, or a byte range.

    Lines come back numbered so you can cite them. A read larger than the context budget allows returns the
    largest part that fits and says where to continue; a line too long to show whole is shown by bytes.

    Args:
        id: The file id from the files list (for example ``file-1a2b3c4d5e6f``).
        start_line: First line to return, counting from 1.
        end_line: Last line to return (inclusive). Omit to read to the end.
        start_byte: First byte to return (0-based), for a byte range instead of lines.
        end_byte: Byte offset to stop before. Omit to read to the end.
    """
    meta = ctx.files.meta(id)
    if (start_byte is not None or end_byte is not None) and (start_line is not None or end_line is not None):
        raise FileRangeError("give a line range or a byte range, not both")
    if start_byte is not None or end_byte is not None:
        return _read_bytes(ctx, id, start_byte or 0, meta.size_bytes if end_byte is None else end_byte)
    first = 1 if start_line is None else start_line
    if first < 1 or (end_line is not None and end_line < first):
        raise FileRangeError(f"invalid line range {start_line}..{end_line}: lines count from 1")
    return _read_lines(ctx, id, first, end_line)


class _Fitter:
    """Collects numbered lines while they fit the budget; counts tokens in batches (one tokenizer call per
    batch, line by line only in the batch that crosses the budget), so memory stays bounded by the budget."""

    BATCH = 256

    def __init__(self, ctx: RunContext, budget: int, header: int) -> None:
        self.ctx, self.budget, self.used = ctx, budget, header
        self.rows: list[str] = []
        self.batch: list[str] = []
        self.full = False

    def add(self, row: str) -> None:
        """Take ``row`` unless the budget is already reached (``full``)."""
        if self.full:
            return
        self.batch.append(row)
        if len(self.batch) >= self.BATCH:
            self.settle()

    def settle(self) -> None:
        if not self.batch:
            return
        cost = _cost(self.ctx, "\n".join(self.batch)) + 1
        if self.used + cost <= self.budget:
            self.rows += self.batch
            self.used += cost
        else:
            for row in self.batch:
                cost = _cost(self.ctx, row) + 1
                if self.used + cost > self.budget:
                    self.full = True
                    break
                self.rows.append(row)
                self.used += cost
        self.batch = []


def _read_lines(ctx: RunContext, file_id: str, first: int, last: int | None) -> str:
    meta = ctx.files.meta(file_id)
    known = ctx.ledger.file_lines(file_id) if ctx.ledger is not None else None
    fitter = _Fitter(ctx, _limit(ctx), _cost(ctx, f"[{meta.name} ({meta.id}) lines {first}-{first} of 1000000]") + 60)
    total, first_offset = 0, 0
    for number, offset, line in ctx.files.iter_lines(file_id):
        total = number
        if last is not None and number > last and known is not None:
            break  # the ledger knows the total: no need to stream the rest of a large object
        if number < first or (last is not None and number > last) or fitter.full:
            if fitter.full and known is not None:
                break
            continue
        first_offset = offset if number == first else first_offset
        fitter.add(f"{number}\t{line}")
    fitter.settle()
    total = known if known is not None else total
    if first > max(total, 1):
        raise FileRangeError(f"{meta.name} has {total:,} lines; start_line {first} is past the end")
    if not fitter.rows and fitter.full:  # the first line alone does not fit: show it by bytes
        return _read_bytes(ctx, file_id, first_offset, meta.size_bytes, line=first)
    stop = first + len(fitter.rows) - 1
    asked = min(last or total, total)
    cut = stop < asked and fitter.full
    more = (
        f"; lines {stop + 1}-{asked} did not fit the context budget: continue with "
        f'file_read(id="{meta.id}", start_line={stop + 1}) after using these'
        if cut
        else ""
    )
    text = f"[{meta.name} ({meta.id}) lines {first}-{stop} of {total}{more}]\n" + "\n".join(fitter.rows)
    if ctx.ledger is not None:
        ctx.ledger.record_read(file_id, tool="file_read", lines=(first, stop))
    return text


def _read_bytes(ctx: RunContext, file_id: str, start: int, end: int, *, line: int | None = None) -> str:
    meta = ctx.files.meta(file_id)
    budget = _limit(ctx)
    data = ctx.files.read(file_id, start, min(end, start + budget * MAX_BYTES_PER_TOKEN + 4))
    header = f"[{meta.name} ({meta.id}) bytes {start}-{start + len(data)} of {meta.size_bytes}]"
    data = _fit_bytes(ctx, data, budget - _cost(ctx, header) - 60)
    stop = start + len(data)
    if stop == start and len(data) < end - start:
        raise ToolError(
            f"not read: no part of {meta.name} from byte {start} fits the {budget:,} tokens left in the context "
            "window; answer with what you have, or search with file_regex"
        )
    where = f"; this is the start of line {line}, which is too long to show whole" if line is not None else ""
    more = (
        f"; bytes {stop}-{min(end, meta.size_bytes)} did not fit: continue with "
        f'file_read(id="{meta.id}", start_byte={stop})'
        if stop < min(end, meta.size_bytes)
        else ""
    )
    text = f"[{meta.name} ({meta.id}) bytes {start}-{stop} of {meta.size_bytes}{where}{more}]\n" + data.decode(
        "utf-8", errors="replace"
    )
    if ctx.ledger is not None and stop > start:
        ctx.ledger.record_read(file_id, tool="file_read", bytes_=(start, stop - 1))
    return text


def _fit_bytes(ctx: RunContext, data: bytes, budget: int) -> bytes:
    """The longest prefix of ``data`` (on a character boundary) whose text fits ``budget``."""
    while data:
        cost = _cost(ctx, data.decode("utf-8", errors="replace"))
        if cost <= budget:
            return data
        cut = max(0, min(len(data) - 1, int(len(data) * budget / cost * 0.97)))
        while 0 < cut < len(data) and (data[cut] & 0xC0) == 0x80:
            cut -= 1  # do not split a UTF-8 character
        data = data[:cut]
    return data


def refusal_message(ctx: RunContext, name: str, what: str, tokens: int, fitting: str) -> str:
    budget = _budget(ctx)
    left = f"{budget:,} tokens are left" if budget is not None else "the read limit is reached"
    return (
        f"not read: {what} of {name} is about {tokens:,} tokens but {left} in the context window. "
        f"Read a smaller range ({fitting} would fit), or search with file_regex first."
    )


@tool(offload=False)
def file_regex(
    ctx: RunContext,
    id: str,
    pattern: str,
    max_matches: int = 20,
    context: int = 0,
    ignore_case: bool = False,
) -> str:
    """Search a file line by line with a regular expression and return the matching lines with line numbers.

    The scan streams the file, so it works on files of any size. Matches are within one line. A pattern that
    runs too long (catastrophic backtracking) is stopped with an error: simplify it and try again.

    Args:
        id: The file id from the files list.
        pattern: A regular expression (Python ``regex`` syntax), e.g. ``TODO|FIXME`` or ``^## ``.
        max_matches: Stop after this many matching lines (1-200).
        context: Lines of context to show before and after each match (0-10).
        ignore_case: Match case-insensitively.
    """
    meta = ctx.files.meta(id)
    if not 1 <= max_matches <= MAX_MATCHES:
        raise ToolError(f"max_matches must be between 1 and {MAX_MATCHES}")
    if not 0 <= context <= 10:
        raise ToolError("context must be between 0 and 10 lines")
    compiled = compile_pattern(pattern, ignore_case)
    blocks, matches, scanned = _scan(ctx, id, compiled, max_matches, context)
    header = (
        f"[{meta.name} ({meta.id}): {matches} matching line(s) for /{pattern}/"
        f"{' (stopped at max_matches)' if matches >= max_matches else ''}, {scanned:,} lines scanned"
    )
    text, shown, tokens = _fitted(ctx, header, blocks)
    if text is None:
        raise ToolError(refusal_message(ctx, meta.name, f"{matches} matches", tokens, "fewer matches or less context"))
    if ctx.ledger is not None:
        for block in shown:
            ctx.ledger.record_read(id, tool="file_regex", lines=(block[0][0], block[-1][0]))
    return text


def _fitted(ctx: RunContext, header: str, blocks: list[list[Row]]) -> tuple[str | None, list[list[Row]], int]:
    """The matches as they fit the budget: long lines cut narrower around the match first, then fewer blocks
    (said in the header), rather than nothing at all. Also the size of all the matches, for a refusal."""
    width, shown, whole, bare = MAX_LINE_CHARS, blocks, None, False
    while True:
        cut = width < MAX_LINE_CHARS and any(len(t) > width for b in shown for _, t, _ in b)
        notes = [f"lines cut to {width:,} characters around the match"] if cut else []
        if bare:
            notes.append("context lines left out to fit")
        if len(shown) < len(blocks):
            notes.append(f"only the first {len(shown)} of {len(blocks)} blocks fit the context budget: narrow the "
                         "pattern, lower max_matches, or search again after using these")  # fmt: skip
        body = "\n--\n".join("\n".join(_row(row, width) for row in block) for block in shown)
        text = header + "".join(f"; {note}" for note in notes) + "]" + (f"\n{body}" if shown else "")
        fits, tokens = fits_budget(ctx, text)
        whole = tokens if whole is None else whole
        if fits:
            return text, shown, whole
        if width > MIN_LINE_CHARS:
            width //= 2
        elif not bare and any(at < 0 for block in shown for _, _, at in block):
            bare = True  # the matching lines alone, before whole blocks go
            shown = [[row for row in block if row[2] >= 0] for block in shown]
        elif len(shown) > 1:
            shown = shown[: len(shown) // 2]
        elif shown and width > MIN_MATCH_CHARS:  # the last block: its match, however narrow, beats nothing
            width = max(MIN_MATCH_CHARS, width // 2)
        elif shown:
            shown = []
        else:
            return None, [], whole


def _row(row: Row, width: int) -> str:
    number, text, at = row
    return f"{number}{':' if at >= 0 else '-'}\t{_clip(text, max(at, 0), width)}"


Row = tuple[int, str, int]  # line number, text, where the match starts (-1: a context line)


class _Collector:
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


def _scan(
    ctx: RunContext, file_id: str, compiled: regex.Pattern[str], max_matches: int, context: int
) -> tuple[list[list[Row]], int, int]:
    """grep's way: large chunks, one search over each, and only the lines where it lands are looked at again
    (alone, with the per-line time limit). A chunk match that spans lines finds nothing in its first line and
    the search goes on after it; patterns that see a line's surroundings (\\A, \\Z, lookbehind) are searched line
    by line throughout. Results are those of a line-by-line scan: matches, numbers, context, max_matches."""
    deadline = time.monotonic() + min(REGEX_TOTAL_LIMIT, max(ctx.deadline.remaining(), 0.001))
    found = _Collector(max_matches, context)
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
        self, line: regex.Pattern[str], block: regex.Pattern[str] | None, found: _Collector, deadline: float
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
            raise ToolError(f"the scan ran out of time at line {self.next_line:,}: search a smaller file or a "
                            "narrower pattern")  # fmt: skip
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


def _clip(line: str, at: int = 0, width: int = MAX_LINE_CHARS) -> str:
    """A long line is cut to ``width`` characters around the match, so the match is always shown."""
    if len(line) <= width:
        return line
    start = max(0, min(at - width // 4, len(line) - width))
    head = f"[… {start:,} chars] " if start else ""
    tail = f" … [{len(line):,} chars]" if start + width < len(line) else ""
    return head + line[start : start + width] + tail


FILE_TOOLS: tuple[Tool, ...] = (file_read, file_regex)
