"""The run page is valid HTML, inert and bounded whatever the run held: any text in any name, message or result
(markup, control characters, surrogates, non-characters, 10 MB) renders escaped, cut and strictly parseable; the
declared secrets never appear, in any of the forms an echo carries."""

from __future__ import annotations

from typing import Any

import html5lib
from agent_runtime import messages as m
from agent_runtime.pages import RunPage, render
from agent_runtime.redaction import Redactor
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.test_show import record


def strict(page: str) -> None:
    html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(page)


def run(text: str, name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    call = {"id": "c1", "type": "function", "function": {"name": name, "arguments": text}}
    history = [m.system("s"), m.user(text), m.assistant(text, [call]), m.tool_result("c1", text)]
    rec = record(final_answer=text, workflow=name, stop_reason=text,
                 files=[{"id": "f1", "name": name, "source": text, "size_bytes": 3}],
                 events=[{"type": "file_read", "file": "f1", "tool": name, "lines": [1, 2], "turn": 1},
                         {"type": "failed", "error": text, "turn": 1}],
                 feedback=[{"by": name, "verdict": text}])  # fmt: skip
    return rec, history


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=300), name=st.text(max_size=60))
def test_any_text_anywhere_renders_strict_html_with_nothing_live(text: str, name: str) -> None:
    rec, history = run(text, name)
    page = render(RunPage(rec, history, {"source": name, "kind": text}))
    strict(page)
    assert page.count("<script") == 0 and page.count("<style") == 1


def test_a_hostile_run_renders_escaped_and_bounded() -> None:
    huge = "<script>alert(1)</script>" + "A" * 10_000_000 + "\x07\x1b]0;pwned\x07\ud800\U0001fffe"
    rec, history = run(huge, "evil\x00<img src=x onerror=alert(1)>")
    page = render(RunPage(rec, history))
    strict(page)
    assert len(page) < 120_000  # 10 MB in four places: each cut to a few thousand characters
    assert "<script" not in page and "<img" not in page and "&lt;img src=x" in page
    assert "\x1b" not in page and "\\x1b]0;pwned" not in page  # cut before it: the first 2,000 characters
    assert "more characters)" in page


def test_declared_secrets_never_appear_in_any_form() -> None:
    secret = "sk-live/4f9+Qz=="
    text = f"key {secret} json {secret.replace('/', chr(92) + '/')} url sk-live%2F4f9%2BQz%3D%3D"
    rec, history = run(text, f"tool {secret}")
    page = render(RunPage(rec, history, redact=Redactor([secret])))
    strict(page)
    assert "sk-live" not in page and "4f9" not in page and "***" in page
