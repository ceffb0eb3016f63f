"""File tools the model always has: ``file_read`` and ``file_regex``.

Both stream the file (memory stays bounded whatever its size), check the context budget before answering, and
record what was shown in the run's read ledger (the coverage map in the status message).
"""

from __future__ import annotations

from ..errors import ToolError
from ..run_context import RunContext
from ..tools import Tool, tool
from .exceptions import FileRangeError
from .grep import Row, compile_pattern, scan
from .readable import text_meta

MAX_CHARS_WITHOUT_LEDGER = 60_000  # when no context engine runs (bare Agent), keep reads modest
MAX_LINE_CHARS = 2_000  # a line longer than this is cut in file_regex output
MIN_LINE_CHARS = 160  # cut no narrower when fitting the budget: drop blocks instead ...
MIN_MATCH_CHARS = 40  # ... but the one block left is cut down to this around its match
MAX_BYTES_PER_TOKEN = 16  # a token is rarely more: never load more than the budget could show
MAX_MATCHES = 200
# What a chunk search cannot answer for a line alone: \A \Z \z \G, lookbehind, multiline turned off.


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

    A document (PDF, DOCX, PPTX, XLSX) is read as its extracted text; a binary file cannot be read as text.
    Lines come back numbered so you can cite them. A read larger than the context budget allows returns the
    largest part that fits and says where to continue; a line too long to show whole is shown by bytes.

    Args:
        id: The file id from the files list (for example ``file-1a2b3c4d5e6f``).
        start_line: First line to return, counting from 1.
        end_line: Last line to return (inclusive). Omit to read to the end.
        start_byte: First byte to return (0-based), for a byte range instead of lines.
        end_byte: Byte offset to stop before. Omit to read to the end.
    """
    if (start_byte is not None or end_byte is not None) and (start_line is not None or end_line is not None):
        raise FileRangeError("give a line range or a byte range, not both")
    meta = text_meta(ctx, id)  # a document's extracted text; a binary file is an error saying so
    if start_byte is not None or end_byte is not None:
        return _read_bytes(ctx, meta.id, start_byte or 0, meta.size_bytes if end_byte is None else end_byte)
    first = 1 if start_line is None else start_line
    if first < 1 or (end_line is not None and end_line < first):
        raise FileRangeError(f"invalid line range {start_line}..{end_line}: lines count from 1")
    return _read_lines(ctx, meta.id, first, end_line)


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
    if not 1 <= max_matches <= MAX_MATCHES:
        raise ToolError(f"max_matches must be between 1 and {MAX_MATCHES}")
    if not 0 <= context <= 10:
        raise ToolError("context must be between 0 and 10 lines")
    compiled = compile_pattern(pattern, ignore_case)
    meta = text_meta(ctx, id)  # a document's extracted text; a binary file is an error saying so
    blocks, matches, scanned = scan(ctx, meta.id, compiled, max_matches, context)
    header = (
        f"[{meta.name} ({meta.id}): {matches} matching line(s) for /{pattern}/"
        f"{' (stopped at max_matches)' if matches >= max_matches else ''}, {scanned:,} lines scanned"
    )
    text, shown, tokens = _fitted(ctx, header, blocks)
    if text is None:
        raise ToolError(refusal_message(ctx, meta.name, f"{matches} matches", tokens, "fewer matches or less context"))
    if ctx.ledger is not None:
        for block in shown:
            ctx.ledger.record_read(meta.id, tool="file_regex", lines=(block[0][0], block[-1][0]))
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
            notes.append(
                f"only the first {len(shown)} of {len(blocks)} blocks fit the context budget: narrow the "
                "pattern, lower max_matches, or search again after using these"
            )
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


def _clip(line: str, at: int = 0, width: int = MAX_LINE_CHARS) -> str:
    """A long line is cut to ``width`` characters around the match, so the match is always shown."""
    if len(line) <= width:
        return line
    start = max(0, min(at - width // 4, len(line) - width))
    head = f"[… {start:,} chars] " if start else ""
    tail = f" … [{len(line):,} chars]" if start + width < len(line) else ""
    return head + line[start : start + width] + tail


FILE_TOOLS: tuple[Tool, ...] = (file_read, file_regex)
