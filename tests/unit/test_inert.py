"""Text from a run reaches people inert, one function per medium (issue 51, point 4): whatever a text holds — escape
sequences (ANSI, OSC 52's clipboard write), C1 controls, bidi overrides and isolates, surrogates, non-characters —
the terminal's, the page's, Slack's and printed JSON's forms carry none of it, and show it as an escape. The
oracle is Unicode's own data (categories, bidi classes), not the module's pattern."""

from __future__ import annotations

import json

from agent_runtime import inert
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hostile_support import unsafe

HOSTILE = st.text(
    st.one_of(
        st.characters(codec=None),
        st.sampled_from(
            ["\x1b", "\x07", "\x9b", "\x9d", "\u202e", "\u2066", "\u2069", "\u200f", "\ud800", "\U0010fffe"]
        ),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(text=HOSTILE)
def test_no_medium_carries_a_control_and_each_shows_it(text: str) -> None:
    for shown in (inert.terminal(text), inert.html(text), inert.mrkdwn(text)):
        assert not any(unsafe(c) for c in shown), ascii(shown)
    assert all(c in inert.terminal(text) for c in text if not unsafe(c))  # nothing else is touched
    assert "<" not in inert.html(text) and '"' not in inert.html(text) and "<" not in inert.mrkdwn(text)


@settings(max_examples=80, deadline=None)
@given(value=st.recursive(HOSTILE | st.integers(), lambda inner: st.lists(inner) | st.dictionaries(HOSTILE, inner),
                          max_leaves=8))  # fmt: skip
def test_printed_json_is_the_same_data_and_inert(value: object) -> None:
    printed = inert.json_text(value)
    assert not any(unsafe(c) for c in printed if c != "\n")
    assert json.loads(printed) == value  # the escapes are JSON's own: a reader gets what was stored


def test_the_red_teams_strings_read_as_escapes() -> None:
    osc52 = "deploy\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x07"
    assert inert.terminal(osc52) == "deploy\\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\\x07"
    assert inert.terminal("report\u202egpj.exe") == "report\\u202egpj.exe"
    assert inert.terminal("a\u2066b\u2069\x9b31m") == "a\\u2066b\\u2069\\x9b31m"
    assert inert.html("<b>\u202e") == "&lt;b&gt;\\u202e" and inert.mrkdwn("*<!here>*") == "&lt;!here&gt;"
