"""The run page is valid HTML, inert and bounded whatever the run held: any text in any name, message or result
(markup, control characters, bidi controls, surrogates, non-characters, 10 MB) renders escaped, cut and strictly
parseable; what it sends is at most ``LIMIT`` bytes however many quote-heavy calls the run made, and it says what
it left out; the declared secrets never appear, in any of the forms an echo carries."""

from __future__ import annotations

import json
from typing import Any

import html5lib
import pytest
from agent_runtime import messages as m
from agent_runtime.pages import RunPage, html, render
from agent_runtime.pages.html import LIMIT, sent_bytes
from agent_runtime.redaction import Redactor
from agent_runtime.views import read_run
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.pages_support import record


def strict(page: str) -> None:
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)


def run(text: str, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": text}}
    history = [m.system("s"), m.user(text), m.assistant(text, [call]), m.tool_result("c1", text)]
    rec = record(final_answer=text, workflow=name, stop_reason=text,
                 files=[{"id": "f1", "name": name, "source": text, "size_bytes": 3}],
                 events=[{"type": "file_read", "file": "f1", "tool": name, "lines": [1, 2], "turn": 1},
                         {"type": "failed", "error": text, "turn": 1}],
                 feedback=[{"by": name, "verdict": text}, {"by": text, "verdict": text, "name": name}])  # fmt: skip
    return rec, history


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300), name=st.text(max_size=60))
def test_any_text_anywhere_renders_strict_html_with_nothing_live(text: str, name: str) -> None:
    rec, history = run(text, name)
    page = render(RunPage(read_run(rec), history, f"{name}/{text}"))
    strict(page)
    assert page.count("<script") == 0 and page.count("<style") == 1


def test_a_hostile_run_renders_escaped_and_bounded() -> None:
    huge = "<script>alert(1)</script>" + "A" * 10_000_000 + "\x07\x1b]0;pwned\x07\ud800\U0001fffe"
    rec, history = run(huge, "evil\x00<img src=x onerror=alert(1)>")
    page = render(RunPage(read_run(rec), history))
    strict(page)
    assert len(page) < 120_000  # 10 MB in four places: each cut to a few thousand characters
    assert "<script" not in page and "<img" not in page and "&lt;img src=x" in page
    assert "\x1b" not in page and "\\x1b]0;pwned" not in page  # cut before it: the first 2,000 characters
    assert "more characters)" in page


def test_declared_secrets_never_appear_in_any_form() -> None:
    secret = "sk-live/4f9+Qz=="
    text = f"key {secret} json {secret.replace('/', chr(92) + '/')} url sk-live%2F4f9%2BQz%3D%3D"
    rec, history = run(text, f"tool {secret}")
    page = render(RunPage(read_run(rec), history, redact=Redactor([secret])))
    strict(page)
    assert "sk-live" not in page and "4f9" not in page and "***" in page


def many(calls: int, unit: str, size: int, **counts: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A run of ``calls`` turns, each saying ``size`` characters of ``unit`` (words, arguments, result), with as
    many model calls, and ``files``/``helpers``/``ratings`` of the same text."""
    text = (unit * (size // max(len(unit), 1) + 1))[:size]
    history = [m.system("s"), m.user(text)]
    for i in range(calls):
        call = {"id": f"c{i}", "type": "function", "function": {"name": text[:80], "arguments": text}}
        history += [m.assistant(text, [call]), m.tool_result(f"c{i}", text)]
    rec = record(
        final_answer=text * 4, stop_reason=text,
        model_calls=[{"turn": i, "model": text, "usage": {"prompt_tokens": 9}, "cost_usd": 0.1} for i in range(calls)],
        files=[{"id": f"f{i}", "name": text, "source": text} for i in range(counts.get("files", 0))],
        children=[{"run_id": text, "final_answer": text, "tool_calls": [{"name": text}]}
                  for _ in range(counts.get("helpers", 0))],
        feedback=[{"by": text, "verdict": text} for _ in range(counts.get("ratings", 0))],
    )  # fmt: skip
    return rec, history


def test_the_red_teams_quote_heavy_run_is_sent_under_the_bound_and_says_what_it_left_out() -> None:
    """Issue 51, point 3: 750 calls of quotes, within every character limit, made a 9.8 MB page (each ``"`` six
    bytes escaped), over Lambda's 6 MB response."""
    rec, history = many(750, '"', 2_200)
    page = render(RunPage(read_run(rec), history))
    assert len(page.encode()) <= sent_bytes(page) <= LIMIT
    assert len(json.dumps(page, ensure_ascii=False).encode()) <= LIMIT  # as Lambda's python3.13 runtime sends it
    assert "more entries left out, to keep this page under 5 MB (runs show --json has the record)" in page
    assert page.count("&quot;" * 2_000) * 12_000 > 3_000_000  # the transcript has most of the bound


UNITS = st.sampled_from(
    ['"', "'", "<&>", "\\", "\n", "中", "\U0001f600", "\u202e\x1b", "\x00\x9b", "\ud800", "\U0010fffe", "a"]
)


@settings(max_examples=8, deadline=None)
@given(calls=st.integers(0, 800), unit=UNITS, size=st.integers(0, 2_200), files=st.integers(0, 400),
       helpers=st.integers(0, 150), ratings=st.integers(0, 400))  # fmt: skip
def test_any_run_sends_at_most_the_bound(
    calls: int, unit: str, size: int, files: int, helpers: int, ratings: int
) -> None:
    rec, history = many(calls, unit, size, files=files, helpers=helpers, ratings=ratings)
    page = render(RunPage(read_run(rec), history))
    assert len(page.encode("utf-8", "surrogatepass")) <= sent_bytes(page) <= LIMIT


@pytest.mark.parametrize("unit", ['"', "中"])
def test_every_section_says_what_it_left_out_and_the_page_stays_strict(
    monkeypatch: pytest.MonkeyPatch, unit: str
) -> None:
    """With a bound of 300 KB (the shares scaled down), each section fills its share, names what it left out, and
    the page still parses strictly."""
    monkeypatch.setattr(html, "LIMIT", 300_000)
    monkeypatch.setattr(html, "SHARES", {name: share // 20 for name, share in html.SHARES.items()})
    rec, history = many(300, unit, 500, files=300, helpers=150, ratings=3_000)
    page = render(RunPage(read_run(rec), history))
    strict(page)
    assert sent_bytes(page) <= 300_000
    for what in ("model calls", "entries", "files", "helpers", "ratings"):
        assert f"more {what} left out, to keep this page under 0 MB" in page, what


def test_a_rating_shows_the_raters_name_and_without_one_their_id() -> None:
    """Ratings keep the name the click gave (Slack's user name); one from before, or a click that gave none, shows
    the id."""
    ratings = [{"by": "U0DANA", "verdict": "good", "name": "dana"}, {"by": "U0LEAD", "verdict": "bad"}]
    page = render(RunPage(read_run(record(feedback=ratings)), None))
    assert "<li>dana: good</li>" in page and "<li>U0LEAD: bad</li>" in page and "U0DANA" not in page
