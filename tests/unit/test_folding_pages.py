"""Paging through a file folds into one row: consecutive reads of one file, each starting where the last ended,
become their notes and the one call that reads the whole range again. Nothing is lost: every line read is still
named by a call, every note is kept verbatim and in order, and what is not paging stays a row of its own."""

from __future__ import annotations

import json
import re

from agent_runtime import messages as m
from agent_runtime.context import TokenCounter
from agent_runtime.context.folding import Folder
from agent_runtime.context.masking import MASK_NAMED
from hypothesis import given, settings
from hypothesis import strategies as st

COUNTER = TokenCounter("gpt-4.1")
ROW = re.compile(r"^- (?P<tool>\w+) (?P<args>\{.*\}) → ")


def read(n: int, file: str, start: int, end: int, note: str | None, *, extra: bool = False) -> list[m.Message]:
    arguments = {"id": file, "start_line": start, "end_line": end} | ({"max_chars": 900} if extra else {})
    call = {"id": f"c{n}", "type": "function", "function": {"name": "file_read", "arguments": json.dumps(arguments)}}
    pointer = (f"[masked: ledger.csv lines {start}-{end} ({file}), 4,208 tokens: the same file_read call returns "
               f"them again]\n[named in it: INV-{start:05d} · INV-{start + 1:05d} · INV-{start + 2:05d}]")  # fmt: skip
    return [m.assistant(note, [call]), m.tool_result(f"c{n}", pointer)]


def fold(turns: list[list[m.Message]]) -> list[str]:
    newest = read(999, "file-ffffff", 1, 2, "newest")
    messages = [m.system("You read."), m.user("Read the ledger."), *(x for t in turns for x in t), *newest]
    folder = Folder(COUNTER, unfoldable=set())
    folder.advance(messages, end=len(messages) - 2)
    return m.text_of(folder.message()).splitlines()[1:]


def covered(lines: list[str]) -> set[tuple[str, int]]:
    found = set()
    for line in lines:
        if (row := ROW.match(line)) is not None:
            arguments = json.loads(row["args"])
            found |= {(arguments["id"], n) for n in range(arguments["start_line"], arguments["end_line"] + 1)}
    return found


def test_pages_of_one_file_become_one_row_with_their_notes() -> None:
    lines = fold([read(1, "file-aaaaaa", 1, 200, "Checked 1-200."), read(2, "file-aaaaaa", 201, 400, None),
                  read(3, "file-aaaaaa", 401, 600, "INV-00451 is flagged.")])  # fmt: skip
    assert lines == [
        "Checked 1-200.",
        "INV-00451 is flagged.",
        '- file_read {"id": "file-aaaaaa", "start_line": 1, "end_line": 600} → lines 1-600, read in 3 calls · '
        "named: INV-00001 · INV-00201 · INV-00401 · INV-00002 · INV-00202",
    ]


def test_a_gap_another_file_or_other_arguments_keep_rows_apart() -> None:
    lines = fold([read(1, "file-aaaaaa", 1, 200, None), read(2, "file-aaaaaa", 301, 400, None),
                  read(3, "file-bbbbbb", 401, 500, None),
                  read(4, "file-bbbbbb", 501, 600, None, extra=True)])  # fmt: skip
    assert [line.split(" → ")[1].split(" · ")[0] for line in lines] == ["lines 1-200", "lines 301-400",
                                                                        "lines 401-500", "lines 501-600"]  # fmt: skip


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(["file-aaaaaa", "file-bbbbbb"]), st.booleans(), st.integers(1, 300),
                          st.one_of(st.none(), st.text("abc .", min_size=1, max_size=12))),
                min_size=1, max_size=25))  # fmt: skip
def test_nothing_read_or_noted_is_lost(reads: list[tuple[str, bool, int, str | None]]) -> None:
    """Any sequence of reads (contiguous or not, over two files, with or without notes) folds into rows that name
    exactly the lines read, keep every note in order, and name at most one pointer's worth per merged row."""
    turns, ends = [], {"file-aaaaaa": 0, "file-bbbbbb": 0}
    for n, (file, contiguous, length, note) in enumerate(reads, 1):
        start = ends[file] + 1 if contiguous else ends[file] + 1 + length
        ends[file] = start + length - 1
        turns.append(read(n, file, start, ends[file], f"note {n}: {note}" if note else None))
    lines = fold(turns)
    expected = {(file, x) for t in turns for file, a, b in [_range(t)] for x in range(a, b + 1)}
    assert covered(lines) == expected
    notes = [line for line in lines if line.startswith("note ")]
    assert notes == [m.text_of(t[0]).strip() for t in turns if m.text_of(t[0])]  # a row keeps a note stripped
    assert len([line for line in lines if ROW.match(line)]) <= len(turns)
    for line in lines:
        if "read in" in line and " · named: " in line:
            assert len(line.split(" · named: ")[1].split(" · ")) <= MASK_NAMED


def _range(turn: list[m.Message]) -> tuple[str, int, int]:
    arguments = json.loads(turn[0]["tool_calls"][0]["function"]["arguments"])
    return arguments["id"], arguments["start_line"], arguments["end_line"]
