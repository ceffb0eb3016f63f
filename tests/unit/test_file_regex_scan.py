"""file_regex's chunked scan gives exactly what a line-by-line scan gives: matches, line numbers, context,
max_matches and the count of lines scanned — across chunk sizes, line ends, patterns and context."""

from __future__ import annotations

import time
from collections import deque

import pytest
import regex
from agent_runtime.files import InMemoryFileStore, grep
from agent_runtime.run_context import RunContext
from hypothesis import given, settings
from hypothesis import strategies as st

PATTERNS = ["ab", "^ab", "b$", "a.c", "x*", r"\d{2}", "(?i)AB", r"a\sb", "c|^$", r"\bab\b", "[^a]b", r"\Aa", r"(?<=a)b",
            r"b\Z", "a\nb"]  # fmt: skip


def line_by_line(text: bytes, pattern: str, max_matches: int, context: int) -> tuple[list, int, int]:
    """The scan as it was: every line searched alone."""
    compiled = regex.compile(pattern)
    store = InMemoryFileStore()
    meta = store.put(text, name="t.txt")
    before: deque = deque(maxlen=context)
    blocks: list = []
    matches, after, scanned = 0, 0, 0
    for number, _, line in store.iter_lines(meta.id):
        scanned = number
        found = compiled.search(line) if matches < max_matches else None
        at = -1 if found is None else found.start()
        if at >= 0:
            matches += 1
            rows = [*before, (number, line, at)]
            before.clear()
            if blocks and blocks[-1][-1][0] >= rows[0][0] - 1:
                blocks[-1].extend(row for row in rows if row[0] > blocks[-1][-1][0])
            else:
                blocks.append(rows)
            after = context
        elif after > 0:
            blocks[-1].append((number, line, -1))
            after -= 1
        elif matches >= max_matches:
            break
        else:
            before.append((number, line, -1))
    return blocks, matches, scanned


def chunked(text: bytes, pattern: str, max_matches: int, context: int) -> tuple[list, int, int]:
    store = InMemoryFileStore()
    meta = store.put(text, name="t.txt")
    ctx = RunContext("run", "flow", store)
    return grep.scan(ctx, meta.id, grep.compile_pattern(pattern, False), max_matches, context)


lines = st.lists(st.text(alphabet="ab c\t1234\ré€", max_size=12), max_size=40)


@settings(max_examples=300, deadline=None)
@given(
    rows=lines,
    ending=st.sampled_from(["\n", "\r\n"]),
    trailing=st.booleans(),
    pattern=st.sampled_from(PATTERNS),
    max_matches=st.integers(1, 6),
    context=st.integers(0, 3),
    chunk=st.integers(1, 64),
)
def test_the_chunked_scan_equals_the_line_scan(rows, ending, trailing, pattern, max_matches, context, chunk) -> None:
    text = ending.join(rows) + (ending if trailing and rows else "")
    data = text.encode()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(grep, "SCAN_CHUNK_BYTES", chunk)
        assert chunked(data, pattern, max_matches, context) == line_by_line(data, pattern, max_matches, context)


@pytest.mark.timed
def test_a_100_mb_scan_is_fast() -> None:
    """The speed this is for (the bench measures it properly): 1.4 M lines, matches near the end."""
    body = b"".join(
        b"2026-11-23 12:00:%02d INFO request handled in %d ms\n" % (n % 60, n % 997) for n in range(400_000)
    )
    data = body + b"2026-11-23 12:01:00 ERROR NEEDLE-1 timeout\n" + body[:1000]
    started = time.perf_counter()
    blocks, matches, _ = chunked(data, r"NEEDLE-\d+", 20, 1)
    assert matches == 1 and blocks[0][1][0] == 400_001 and time.perf_counter() - started < 1.0
