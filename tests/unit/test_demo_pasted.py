"""A short paste stays in the message (it is not kept as a file): the demo model reads it there, to the notes a
read of a kept one gives. Over drawn messages: prose of any number of lines (a question, a request) is no paste;
a question and a log give exactly the log's ERROR lines, numbered by the message's lines (at most 20), and the lines
before the first are the log's, never the person's; a document with a heading gives its open items by line."""

from __future__ import annotations

from agent_runtime.testing.pasted import INLINE, inline_notes
from hypothesis import given, settings
from hypothesis import strategies as st

WORD = st.sampled_from(["export", "ledger", "retry", "why", "owner", "failed", "nightly", "schema", "please", "so"])
SENTENCE = st.lists(WORD, min_size=1, max_size=8).map(lambda words: " ".join(words).capitalize() + ".")
LEVEL = st.sampled_from(["INFO ", "WARN ", "ERROR", "DEBUG"])
FEW = settings(max_examples=60, deadline=None)


@FEW
@given(lines=st.lists(SENTENCE, max_size=12), asks=st.booleans())
def test_prose_is_no_paste(lines: list[str], asks: bool) -> None:
    text = "\n".join(lines) + ("\nWhat went wrong?" if asks else "")
    assert inline_notes(text) == {}


@FEW
@given(question=st.lists(SENTENCE, min_size=1, max_size=2), levels=st.lists(LEVEL, min_size=2, max_size=40))
def test_a_log_gives_its_error_lines_by_the_messages_lines(question: list[str], levels: list[str]) -> None:
    rows = [f"2026-11-20T14:00:{n % 60:02d}Z {level} api order=ord-{n:05d}" for n, level in enumerate(levels)]
    notes = inline_notes("\n".join([*question, *rows]))
    at = len(question) + 1  # the message's line of the log's first line
    errors = [(at + n, row) for n, row in enumerate(rows) if "ERROR" in row]
    assert notes["ticket-errors"]["lines"] == errors[:20]
    before = notes["ticket-excerpt"]["before"]
    assert all(at <= n < errors[0][0] and "ERROR" not in row for n, row in before) if errors else before == []


@FEW
@given(lead=SENTENCE, body=st.lists(SENTENCE, min_size=1, max_size=20), todo_at=st.integers(0, 20))
def test_a_document_gives_its_open_items_by_line(lead: str, body: list[str], todo_at: int) -> None:
    at = min(todo_at, len(body))
    lines = [lead, "# Design", *body[:at], "TODO: pick an owner", *body[at:]]
    note = inline_notes("\n".join(lines))[INLINE]
    assert note["name"] == "“Design” (the document you pasted)"
    assert note["open"] == [[at + 3, "TODO: pick an owner"]]
