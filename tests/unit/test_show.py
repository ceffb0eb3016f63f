"""``runs show`` for people: a run's turns as a transcript — its words, each call with arguments and a cut result,
the engine's work, costs per call, helpers, the answer and its ratings — bounded and inert whatever the run held:
a 10 MB result, markup, escape sequences and control characters in names print as short plain text."""

from __future__ import annotations

from agent_runtime import messages as m
from agent_runtime.reading.show import transcript
from agent_runtime.redaction import Redactor
from agent_runtime.views import read_run

from tests.pages_support import record

CALL = {"id": "c1", "type": "function", "function": {"name": "fetch\x1b[2J", "arguments": '{"url": "https://x"}'}}


def test_a_run_reads_turn_by_turn_with_its_costs_events_helpers_and_ratings() -> None:
    history = [m.system("s"), m.user("Check it"), m.assistant("Looking.", [CALL]), m.tool_result("c1", "ok: 3 rows")]
    text = transcript(read_run(record()), history)
    lines = text.splitlines()
    assert lines[0] == "run run-1 · w · completed · gpt-4o · 1 model calls · 1,234 tokens · $0.0123 (helpers $0.0020)"
    assert "user: Check it" in lines and "-- turn 1 · $0.0100 · 900 in / 30 out" in lines
    assert "   [masking: 2 used output(s) became pointers]" in lines
    assert "   [approval: restart approved by U0LEAD]" in lines and "   [skill loaded: runbooks]" in lines
    assert '  -> fetch\\x1b[2J {"url": "https://x"}' in lines  # an escape sequence shown, not sent
    assert "     <- ok: 3 rows" in lines and "   [stopped by U1 (slack)]" in lines
    assert "helper run-1.sub1: completed · $0.0020 · 2 tool calls" in lines
    assert "feedback: U0DANA said good" in lines and "answer: done <script>alert(1)</script>" in lines


def test_a_hostile_run_prints_bounded_and_inert() -> None:
    huge = "A" * 10_000_000 + "\x07\x1b]0;pwned\x07"
    history = [m.user("go\x00\x1b[31m"), m.assistant(None, [CALL]), m.tool_result("c1", huge)]
    text = transcript(read_run(record(final_answer="done\x1b]52;c;cHduZWQ=\x07 \u202etxt.exe")), history)
    assert len(text) < 10_000 and "\x1b" not in text and "\x07" not in text and "\x00" not in text
    assert "\u202e" not in text and "\\u202etxt.exe" in text  # a bidi override shown, not obeyed
    assert "A… (9,999,611 more characters)" in text  # the result: its first 400 characters, and how much was left
    assert "(no checkpoint kept" in transcript(read_run(record()), None)


def test_the_final_answer_is_shown_whole_redacted_and_inert() -> None:
    """Issue 50: the answer is what a person runs `runs show` for — never cut (was: "… 329 more characters")."""
    answer = "\n".join(f"line {i}: " + "x" * 60 for i in range(300)) + " key sk-live-0123456789 end\x1b[2J"
    text = transcript(read_run(record(final_answer=answer)), None, Redactor(["sk-live-0123456789"]))
    shown = text.split("\nanswer: ", 1)[1]
    assert "more characters" not in shown and "line 299: " + "x" * 60 + " key *** end\\x1b[2J" in shown
    assert all(f"line {i}: " in shown for i in range(300)) and "sk-live" not in text
