"""Folds, piece by piece: what a row keeps, what stops a fold, what later compactions make of a fold."""

from __future__ import annotations

import json

from agent_runtime import messages as m
from agent_runtime.context import TokenCounter
from agent_runtime.context.cache import Break, cached_ratio, horizon
from agent_runtime.context.folding import Folder
from agent_runtime.context.identifiers import extract, fact_rank
from agent_runtime.context.prompts import deterministic_summary
from agent_runtime.context.transcript import render
from agent_runtime.models.prices import Prices

COUNTER = TokenCounter("gpt-4.1")
POINTER = (
    '[masked: the read result, 2,194 tokens, now in file file-c150224ed9fb; again: file_read(id="file-c150224ed9fb")]'
    "\n[named in it: PROJ-12 · https://example.com/a]"
)


def turn(n: int, note: str | None, results: list[tuple[str, str]]) -> list[m.Message]:
    calls = [{"id": f"c{n}-{i}", "type": "function", "function": {"name": name, "arguments": json.dumps({"n": n})}}
             for i, (name, _) in enumerate(results)]  # fmt: skip
    return [m.assistant(note, calls), *(m.tool_result(f"c{n}-{i}", text) for i, (_, text) in enumerate(results))]


def history(*turns: list[m.Message]) -> list[m.Message]:
    return [m.system("You read."), m.user("Read PROJ-1."), *(x for t in turns for x in t)]


def test_a_row_keeps_the_note_verbatim_each_call_and_where_its_result_is() -> None:
    messages = history(
        turn(1, 'First line of my notes.\nNOTES evidence {"k": 1}', [("read", POINTER), ("read", "ok: 3 rows")]),
        turn(2, None, [("read", POINTER)]),
        turn(3, "newest", [("read", "not read yet " * 400)]),
    )
    folder = Folder(COUNTER, unfoldable={"send"})
    scan = folder.advance(messages, end=len(messages) - 2)
    assert (scan.start, scan.cursor, scan.turns) == (2, 7, 2)
    text = m.text_of(folder.message())
    assert text.splitlines()[1:] == [
        "First line of my notes.",
        'NOTES evidence {"k": 1}',
        '- read {"n": 1} → file-c150224ed9fb · named: PROJ-12 · https://example.com/a',
        '- read {"n": 1} → ok: 3 rows',
        '- read {"n": 2} → file-c150224ed9fb · named: PROJ-12 · https://example.com/a',
    ]
    assert folder.estimate() > 0 and COUNTER.message(folder.message()) < scan.tokens


def test_actions_stop_a_fold_and_outputs_still_to_mask_make_it_wait() -> None:
    folder = Folder(COUNTER, unfoldable={"send"})
    turns = [("read", POINTER), ("send", "sent"), ("read", POINTER), ("read", "x " * 600), ("read", POINTER)]
    messages = history(
        *(turn(n, note, [result]) for n, (note, result) in enumerate(zip("abcde", turns, strict=True), 1))
    )
    scan = folder.advance(messages, end=len(messages) - 2)
    assert scan.start == 6 and scan.turns == 1  # after the action; the big unmasked output (turn 4) is waited for
    assert messages[scan.cursor]["tool_calls"][0]["id"] == "c4-0"
    again = folder.advance(messages, end=len(messages) - 2)
    assert again.cursor == scan.cursor and again.turns == 1  # resumed, nothing rescanned past the wait


def test_a_fold_gives_later_compactions_the_notes_and_calls_not_the_results() -> None:
    fold = m.user("[folded: 2 earlier turns of yours: …]\nChecked PROJ-7 first.\n"
                  '- read {"path": "docs/a.md"} → file-c150224ed9fb · named: PROJ-99 · 12,345')  # fmt: skip
    facts = extract([fold])
    assert "PROJ-7" in facts and "docs/a.md" in facts
    assert "PROJ-99" not in facts and "file-c150224ed9fb" not in facts  # only the output named them
    span = [m.user("Read PROJ-1."), fold]
    summary = deterministic_summary(span, render(span, title="t"), mutating=set())
    users, answers = summary.split("## Assistant answers")
    assert "folded" not in users and "Checked PROJ-7 first." in answers
    assert "assistant's earlier turns, folded" in render(span, title="t").text


def test_a_cut_pinned_list_keeps_the_users_keys_before_numbers() -> None:
    ranked = sorted(["1,641", "file-c150224ed9fb", "TICK-110", "2026-11-25", "never email ops", "docs/a.md"],
                    key=fact_rank)  # fmt: skip
    assert ranked[:3] == ["TICK-110", "never email ops", "docs/a.md"] and ranked[-2:] == ["1,641", "2026-11-25"]


def test_the_break_rule_and_its_inputs() -> None:
    assert Break(lost=0, saved=100, horizon=1, ratio=0.25).pays  # nothing cached is lost
    assert Break(lost=2_000, saved=1_970, horizon=1, ratio=0.25).pays  # the output just read: pays at once
    behind_kept = Break(lost=9_500, saved=2_400, horizon=4, ratio=0.25)
    assert not behind_kept.pays and Break(9_500, 2_400, 9, 0.25).pays  # waits for a longer run
    assert behind_kept.to_dict()["break_cost"] == 0.75 * 9_500 - 2_400
    assert cached_ratio(Prices(2.5, 1.25, 10)) == 0.5 and cached_ratio(None) == cached_ratio(Prices(0, 0, 0)) == 0.25
    assert horizon(1, None) == 1 and horizon(30, None) == 30 and horizon(30, 4) == 5 and horizon(30, 0) == 1


def test_a_fold_names_what_a_result_named_unless_the_folds_own_words_already_do() -> None:
    pointer = '[masked: the read result, 900 tokens; again: file_read(id="file-00000000000{n}")]\n[named in it: {ids}]'
    messages = history(
        turn(1, "Reading the queue.", [("read", pointer.format(n=1, ids="ID-1 · ID-10"))]),
        turn(2, "Noted ID-1 from section 1.", [("read", pointer.format(n=2, ids="ID-2 · ID-1"))]),
        turn(3, "Noted ID-2 and ID-30.", [("read", pointer.format(n=3, ids="ID-3 · PROJ-7"))]),
        turn(4, "newest", [("read", "not read yet " * 400)]),
    )
    folder = Folder(COUNTER, unfoldable=set())
    folder.advance(messages, end=len(messages) - 2)
    rows = [line for line in m.text_of(folder.message()).splitlines() if line.startswith("- ")]
    assert rows == [
        '- read {"n": 1} → file-000000000001 · named: ID-10',  # ID-1 is in a later note; ID-10 is not ("ID-1" is)
        '- read {"n": 2} → file-000000000002',
        '- read {"n": 3} → file-000000000003 · named: ID-3 · PROJ-7',  # "ID-30" is not ID-3
    ]
