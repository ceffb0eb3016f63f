"""A reasoning block that opens a reply (``<think>…</think>``, as Qwen3 and DeepSeek-R1 write when their server does
not split it out) is the model's, never people's: whatever the pieces a stream brings it in, what is shown is a
prefix of what the whole reply shows, holds no reasoning, and is all of it once the words have begun."""

from __future__ import annotations

from agent_runtime.models.reasoning import VisibleStream, visible
from hypothesis import example, given
from hypothesis import strategies as st

SECRET = "SECRET-REASONING"
words = st.text(st.sampled_from(list("ab <>/thinkTHINK\n.")), max_size=30)
blocks = st.lists(st.tuples(st.sampled_from(["", " ", "\n\n"]), words), max_size=3).map(
    lambda found: "".join(f"{space}<think>{SECRET}{inner.replace('</think>', '')}</think>" for space, inner in found)
)


def pieces(text: str, cuts: list[int]) -> list[str]:
    at = sorted({min(max(c, 0), len(text)) for c in cuts})
    return [text[a:b] for a, b in zip([0, *at], [*at, len(text)], strict=True)]


def streamed(text: str, cuts: list[int]) -> list[str]:
    stream = VisibleStream()
    shown, seen = "", []
    for piece in pieces(text, cuts):
        shown += stream.feed(piece)
        seen.append(shown)
    return seen


@example("<think>SECRET-REASONING</think>", "", "<think>", [])  # a second block at once: found by CI
@given(blocks, st.sampled_from(["", " ", "\n"]), words, st.lists(st.integers(0, 200), max_size=12))
def test_the_stream_never_shows_reasoning_and_shows_the_words_whole(
    thinking: str, gap: str, said: str, cuts: list[int]
) -> None:
    text = thinking + gap + said
    whole = visible(text)
    assert SECRET not in whole
    rest = (gap + said).lstrip()
    if thinking:  # words that open with a block of their own open with reasoning too
        assert whole == (visible(rest) if rest.startswith("<think>") else rest)
    for shown in streamed(text, cuts):
        assert whole.startswith(shown) and SECRET not in shown
    begun = whole.strip() and not "<think>".startswith(whole.lstrip())
    if begun:
        assert streamed(text, cuts)[-1] == whole


@given(words.filter(lambda w: w.strip() != "" and not w.lstrip().startswith("<think>")), blocks)
def test_a_tag_after_the_words_is_words(said: str, later: str) -> None:
    """Only a block that opens the reply is reasoning: a model writing about tags keeps its words."""
    assert visible(said + later) == said + later


def test_a_block_never_closed_hides_the_rest() -> None:
    assert visible("<think>cut at the limit") == "" and visible("  <think>a</think> Hi <think>b") == "Hi <think>b"
