"""Folding: old turns whose results are all masked become rows of one message.

Once its outputs are masked, an old turn is the model's note and calls plus one pointer per call: some 80
tokens that every later request carries (at the cached price, but for the rest of the run: over a long run
they cost more than the outputs did). Folded, the turn is one row of about half that. Nothing is lost: a row
keeps the note verbatim, each call's name and arguments, and where its result is now (the pointer's file, or
its line range, and the identifiers it named that no note or call of the fold already names); a result too small
to mask is kept verbatim.

A row is the note verbatim, then a line per call: ``- tool {arguments} → where its result is``. Turns that page
through a file (one read each, every range starting where the last ended) become one row: their notes, then the
one call that reads the whole range again, naming as many identifiers as one read's pointer does.
A fold covers whole turns (an assistant message with calls, and all their results), so no call is parted from
its result. It never covers an action (a mutating tool's turn), a pinned or kept result, a user message, an
answer or a summary, and the newest turn (not read yet) stays as it is. A fold is one message that is never
rewritten: the next fold is a new message after it, so the prefix before it stays cached.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from itertools import chain, zip_longest

from .. import messages as msgs
from ..messages import Message
from .counter import TokenCounter
from .history import FOLD_MARK, MASK_MARK
from .masking import MASK_NAMED

MIN_FOLD_SAVED = 200  # tokens a fold must free: its header (~30) and its cache break (priced apart) need a batch
INLINE_RESULT_TOKENS = 200  # results this small are never masked (compaction.MIN_MASK_TOKENS): rows keep them
HEADER = (
    f"{FOLD_MARK}{{n}} earlier turns of yours: notes verbatim, calls as "
    '"- tool {{arguments}} → where the result is now"]'
)
_FILE = re.compile(r"\bfile-[0-9a-f]{6,}\b")
_LINES = re.compile(r"\blines (\d+)-(\d+)")
_NAMED = "\n[named in it: "


@dataclass(frozen=True)
class Span:
    """One read of lines ``start``-``end`` of a file by ``tool`` (arguments: the file's id and the range)."""

    tool: str
    file: str
    start: int
    end: int

    def continued_by(self, other: Span) -> bool:
        return (other.tool, other.file, other.start) == (self.tool, self.file, self.end + 1)


@dataclass(frozen=True)
class Row:
    """One turn: the model's words (its note, each call with where its result is) and, per call, what the result
    named. Named identifiers that the fold's own words repeat are left out when the fold is written."""

    lines: tuple[str, ...]
    named: tuple[tuple[int, tuple[str, ...]], ...]  # (index in lines, identifiers the result named)
    span: Span | None = None  # a turn that only read lines of a file: where paging rows merge

    def text(self, said: str = "") -> str:
        lines = list(self.lines)
        for index, named in self.named:
            fresh = [ident for ident in named if not _names(said, ident)]
            lines[index] += f" · named: {' · '.join(fresh)}" if fresh else ""
        return "\n".join(lines)


@dataclass
class FoldScan:
    """The run of foldable turns that ends where the used history does, found by a scan resumed each turn."""

    start: int = 0  # first message of the run
    cursor: int = 0  # messages before it have been scanned
    last: Message | None = None  # the message before the cursor, when it was scanned
    turns: int = 0
    rows: list[Row] = field(default_factory=list)
    tokens: int = 0  # of the messages start:cursor
    row_tokens: int = 0  # of their rows


class Folder:
    def __init__(self, counter: TokenCounter, *, unfoldable: set[str]) -> None:
        self.counter = counter
        self.unfoldable = unfoldable  # mutating, pinned and kept tools: their turns stay whole
        self.scan = FoldScan()

    def reset(self) -> None:
        self.scan = FoldScan()

    def resume_after(self, index: int, fold: Message) -> None:
        """A fold now stands at ``index``: what is before it is scanned, what is after it is next."""
        self.scan = FoldScan(start=index + 1, cursor=index + 1, last=fold)

    def advance(self, messages: list[Message], end: int) -> FoldScan:
        """Extend the run of foldable turns up to ``end`` (the newest turn's assistant message, which stays).
        Stops at a turn whose output waits to be masked; restarts after anything that can never fold."""
        scan = self.scan
        if scan.cursor > len(messages) or (scan.cursor and messages[scan.cursor - 1] is not scan.last):
            scan = self.scan = FoldScan()
        index = scan.cursor
        while index < end:
            stop = _turn_end(messages, index)
            if stop is None or stop > end:
                self._restart(index + 1)
                index += 1
                continue
            row = self._row(messages[index], messages[index + 1 : stop])
            if isinstance(row, Row):
                self._add(row, messages[index:stop])
            elif row == "wait":
                break
            else:
                self._restart(stop)
            index = stop
        scan = self.scan
        scan.cursor, scan.last = index, messages[index - 1] if index else None
        return scan

    def estimate(self) -> int:
        """Tokens the fold found so far would free (its header is ~25 tokens, one per row for the line)."""
        return self.scan.tokens - self.scan.row_tokens - self.scan.turns - 25

    def message(self) -> Message:
        scan = self.scan
        rows = _paged(scan.rows)
        said = "\n".join(line for row in rows for line in row.lines)  # the notes and calls, not the named
        return msgs.user("\n".join([HEADER.format(n=scan.turns), *(row.text(said) for row in rows)]))

    def _restart(self, at: int) -> None:
        self.scan.start, self.scan.turns, self.scan.rows = at, 0, []
        self.scan.tokens = self.scan.row_tokens = 0

    def _add(self, row: Row, turn: list[Message]) -> None:
        scan = self.scan
        scan.turns += 1
        scan.rows.append(row)
        scan.tokens += sum(self.counter.message(message) for message in turn)
        scan.row_tokens += self.counter.text(row.text())  # at most: the fold may leave some named out

    def _row(self, assistant: Message, results: list[Message]) -> Row | str | None:
        """The turn as one row; None if it can never fold; "wait" if an output is still to be masked."""
        note = assistant.get("content")
        calls = assistant.get("tool_calls") or []
        if not isinstance(note, str | None) or any(call["function"]["name"] in self.unfoldable for call in calls):
            return None
        by_id = {result.get("tool_call_id"): result for result in results}
        lines = [note.strip()] if note and note.strip() else []
        named: list[tuple[int, tuple[str, ...]]] = []
        for call in calls:
            result = by_id.get(call["id"])
            content = None if result is None else result.get("content")
            if result is None or not isinstance(content, str):
                return None
            if not content.startswith(MASK_MARK) and self.counter.message(result) >= INLINE_RESULT_TOKENS:
                return "wait"  # a used output the rolling mask has not masked yet
            function = call["function"]
            shown, idents = _shown(content, function["arguments"])
            named += [(len(lines), idents)] if idents else []
            lines.append(f"- {function['name']} {function['arguments']} → {shown}")
        only = calls[0]["function"] if len(calls) == 1 else None  # its result is the loop's last: a str
        return Row(tuple(lines), tuple(named), _span(only["name"], only["arguments"], str(content)) if only else None)


def _turn_end(messages: list[Message], index: int) -> int | None:
    """The index after the turn that starts at ``index`` (an assistant message with calls and its results)."""
    if messages[index]["role"] != "assistant" or not messages[index].get("tool_calls"):
        return None
    stop = index + 1
    while stop < len(messages) and messages[stop]["role"] == "tool":
        stop += 1
    return stop


def _names(text: str, ident: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(ident)}(?![\w-])", text) is not None


def _shown(content: str, arguments: str) -> tuple[str, tuple[str, ...]]:
    """A result in a row: a pointer shortened to where the output is (no file id its call already names) and the
    identifiers it named, or a small result verbatim."""
    if not content.startswith(MASK_MARK):
        return content.replace("\n", "\n    "), ()
    head, _, named = content.partition(_NAMED)
    found = _FILE.search(head)
    if found is None:  # a pointer of another shape: its words, without the brackets
        return head[len(MASK_MARK) :].rstrip("]"), ()
    lines = _LINES.search(head)
    where = found[0] if found[0] not in arguments else ""
    if lines:
        where = f"lines {lines[1]}-{lines[2]}" + (f" of {where}" if where else "")
    where = where or "the same call reads it again"
    return where, tuple(named.rstrip("]").split(" · ")) if named else ()


def _span(tool: str, raw: str, content: str) -> Span | None:
    """The lines a call read, when its arguments are just a file id and a line range and its pointer says where
    those lines are."""
    try:
        arguments = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(arguments, dict) or set(arguments) != {"id", "start_line", "end_line"}:
        return None
    lines = _LINES.search(content.partition(_NAMED)[0]) if content.startswith(MASK_MARK) else None
    if lines is None or not isinstance(arguments["id"], str) or int(lines[1]) != arguments["start_line"]:
        return None
    return Span(tool, arguments["id"], int(lines[1]), int(lines[2]))


def _paged(rows: list[Row]) -> list[Row]:
    """Consecutive rows that page through one file merged into one row each (other rows as they are)."""
    merged: list[Row] = []
    run: list[Row] = []
    for row in [*rows, None]:
        if row is not None and row.span and run and run[-1].span and run[-1].span.continued_by(row.span):
            run.append(row)
            continue
        merged += [_merge(run)] if len(run) > 1 else run
        run = [row] if row is not None else []
    return merged


def _merge(run: list[Row]) -> Row:
    first, last = run[0].span, run[-1].span
    assert first is not None and last is not None
    notes = [line for row in run for line in row.lines[:-1]]
    arguments = json.dumps({"id": first.file, "start_line": first.start, "end_line": last.end})
    call = f"- {first.tool} {arguments} → lines {first.start}-{last.end}, read in {len(run)} calls"
    per_read = [named for row in run for _, named in row.named]
    picked = [ident for ident in chain.from_iterable(zip_longest(*per_read)) if ident is not None]
    named = tuple(dict.fromkeys(picked))[:MASK_NAMED]  # one re-read of the range names as many as one read did
    return Row((*notes, call), ((len(notes), named),) if named else ())
