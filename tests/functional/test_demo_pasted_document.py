"""A direct message whose pasted text is a document (a design doc, meeting notes), not a log, was answered "I
found no error line in the log you pasted"; one short enough to stay in the message (not kept as a file) was
answered "Nothing is attached" or "I could not find an answer". The promise, over drawn documents of any length
pasted into a direct message to document-feedback in the playground (and through the CLI): the answer is a review
of that document, as an attachment's is (its title, each TODO line and each open question with its line in the
message); a pasted log, long or short, is read from its first error, and one with no error line is said to have
none."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.cli_support import run_cli
from tests.playground_support import act, new_answer, page_token, playground, repo_workflows, run_ids

ONCE = settings(max_examples=3, deadline=None, suppress_health_check=list(HealthCheck))
WORD = st.sampled_from(["ledger", "export", "settlement", "warehouse", "retry", "owner", "nightly", "schema", "feed"])
TITLE = st.lists(WORD, min_size=1, max_size=4).map(lambda words: " ".join(words).capitalize())
FILLER = "The {} job writes settlement rows to the warehouse every night and reconciles them with the bank's file."


def document(title: str, todo: str, questions: list[str], notes: bool, filler: int = 50) -> tuple[str, int, list[int]]:
    """A pasted document after the person's one line, and the message's lines of its TODO and its questions;
    ``filler`` lines in each of two sections (at 50, the message is kept as a file; at a few, it stays inline)."""
    lines = ["Could you look at this before Friday?", f"# {title}", "", "## Attendees" if notes else "## Context"]
    lines += [FILLER.format(n) for n in range(filler)]
    lines += ["", "## Decisions", f"We keep the nightly batch. TODO: {todo}", ""]
    todo_at = len(lines) - 1
    lines += ["## Open questions", ""]
    asked = []
    for question in questions:
        lines.append(f"- {question.capitalize()}?")
        asked.append(len(lines))
    lines += ["", "## Rollout", *(FILLER.format(n) for n in range(filler, 2 * filler))]
    return "\n".join(lines), todo_at, asked


def reviewed(said: str, title: str, todo: str, todo_at: int, questions: list[str], asked: list[int]) -> None:
    assert said.startswith(f"*Review of “{title}” (the document you pasted)*"), said
    assert f"line {todo_at}: We keep the nightly batch. TODO: {todo}" in said, said
    for question, line in zip(questions, asked, strict=True):
        assert f"line {line}: {question.capitalize()}?" in said, said
    assert "error line" not in said and "could not read" not in said


def test_a_document_pasted_in_a_direct_message_is_reviewed(tmp_path: Path) -> None:
    with playground(tmp_path, repo_workflows(tmp_path, "document-feedback")) as server:
        token = page_token(server.url)

        @ONCE
        @given(
            title=TITLE,
            todo=st.lists(WORD, min_size=1, max_size=4).map(" ".join),
            questions=st.lists(st.lists(WORD, min_size=2, max_size=5).map(" ".join), max_size=3, unique=True),
            notes=st.booleans(),
            filler=st.integers(0, 60),
        )
        @example(title="Ledger", todo="pick owner", questions=["who owns retries"], notes=False, filler=0)
        @example(title="Ledger", todo="pick owner", questions=[], notes=True, filler=3)  # inline, ends with no "?"
        @example(title="Ledger", todo="pick owner", questions=["who owns retries"], notes=False, filler=50)
        def review(title: str, todo: str, questions: list[str], notes: bool, filler: int) -> None:
            text, todo_at, asked = document(title, todo, questions, notes, filler)
            before = run_ids(server)
            act(server.url, "message", {"channel": "D0AGENT", "text": text}, token)
            reviewed(new_answer(server, before, "document-feedback"), title, todo, todo_at, questions, asked)

        review()


@pytest.mark.parametrize("pasted", ["document", "short document", "log", "short log"])
def test_the_cli_reviews_a_pasted_document_and_says_a_clean_log_has_no_error(tmp_path: Path, pasted: str) -> None:
    filler = 2 if pasted.startswith("short") else 50
    if pasted.endswith("document"):
        text, todo_at, asked = document(
            "Ledger export design", "pick the schema owner", ["who owns retries"], False, filler
        )
    else:
        rows = [f"2026-11-20T14:{n // 60:02d}:{n % 60:02d}Z INFO  api ok order=ord-{n:05d}" for n in range(filler * 6)]
        text = "\n".join(["Anything odd in this?", *rows])
    (tmp_path / "message.txt").write_text(text)
    env = {"AGENT_STATE_DIR": str(tmp_path / "state")}
    result = run_cli("run", "document-feedback", "-q", "-m", f"@{tmp_path / 'message.txt'}", env=env)
    assert result.returncode == 0, result.stderr
    if pasted.endswith("document"):
        reviewed(result.stdout, "Ledger export design", "pick the schema owner", todo_at, ["who owns retries"], asked)
    else:
        assert result.stdout.startswith("I found no error line in the log you pasted"), result.stdout


def short_log(question: str, ok: int, failure: str, errors: int) -> str:
    """A question, then a few log lines that went well and ``errors`` saying ``failure``: short enough to stay in
    the message (its first error is the message's line ``ok + 2``)."""
    at = [f"2026-11-20T14:00:{n:02d}Z" for n in range(ok + errors)]
    rows = [f"{at[n]} INFO  api ok order=ord-{n:05d}" for n in range(ok)]
    rows += [f"{at[n]} ERROR api {failure} order=ord-{n:05d}" for n in range(ok, ok + errors)]
    return "\n".join([question, *rows])


def test_a_short_log_pasted_with_a_question_is_read_from_its_first_error(tmp_path: Path) -> None:
    """A log short enough to stay in the message is read as a long one is: its first error, its line in the
    message, how many error lines, and the log's line just before it (never the person's question)."""
    with playground(tmp_path, repo_workflows(tmp_path, "document-feedback")) as server:
        token = page_token(server.url)

        @ONCE
        @given(ok=st.integers(1, 8), failure=TITLE, errors=st.integers(1, 6))
        @example(ok=1, failure="Timeout", errors=1)
        def read(ok: int, failure: str, errors: int) -> None:
            before = run_ids(server)
            question = "Why did the export fail?"
            act(server.url, "message", {"channel": "D0AGENT", "text": short_log(question, ok, failure, errors)}, token)
            said = new_answer(server, before, "document-feedback")
            assert f"The first error is at line {ok + 2}: " in said and f"ERROR api {failure} order=" in said, said
            assert f"{errors} error line(s)" in said and question not in said, said
            assert f"Just before it, line {ok + 1}: " in said, said

        read()
