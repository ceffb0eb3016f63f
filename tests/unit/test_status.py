"""The status's text: every fact in a few lines, nothing paid for twice (it is new, uncached, in every request)."""

from __future__ import annotations

from agent_runtime.context.status import WindowNumbers, render_status
from agent_runtime.files import FileMeta

NUMBERS = WindowNumbers(
    turn=7, used=6_202, usable=27_904, output_reserve=4_096, compaction_at=22_323, compactions=1,
    split={"system": 11, "tools": 451, "history": 5_740, "files inline": 0, "summary": 0},
    tool_calls_used=12, tool_calls_limit=50,
)  # fmt: skip


def archive(n: int, read: bool) -> tuple[FileMeta, dict[str, object]]:
    state = {"tokens": 900, "lines": 40, "read_lines": [[1, 40]] if read else [[1, 10]]}
    return FileMeta(f"file-{n:012x}", f"read-{n}.txt", "text/plain", 3_600, source="archive"), state


def test_the_status_says_each_number_once_and_leaves_out_parts_at_zero() -> None:
    lines = render_status(NUMBERS, []).splitlines()
    assert lines == [
        "[context status · turn 7]",
        "tokens: 6,202 used of 27,904 available for input (22.2%), 21,702 left; 4,096 more reserved for the answer",
        "split: system 11 · tools 451 · history 5,740",
        "compaction at 22,323 tokens (16,121 to go); 1 so far",
        "tool calls: 12 used of 50, 38 left",
    ]


def test_files_not_worth_a_row_are_one_line_and_listed_ones_say_how_many_more() -> None:
    read = [archive(n, read=True) for n in range(1, 120)]
    assert render_status(NUMBERS, read).splitlines()[-1] == "files: 119, each named by the message that points at it"
    mixed = render_status(NUMBERS, [*read, archive(200, read=False)]).splitlines()
    assert mixed[-3:] == [
        "files (120):",
        '- file-0000000000c8 "read-200.txt" (archive, "text/plain", 900 tokens, 40 lines) read lines 1-10 of 40 (25%); '
        "not preloaded",
        "- … 119 more: ids in the messages that point at them",
    ]
