"""A slip of the keyboard in a name, for properties of "did you mean": validate's, run's, the CLI's."""

from __future__ import annotations

from hypothesis import strategies as st


@st.composite
def slips(draw: st.DrawFn, word: str) -> str:
    """One slip of the keyboard in ``word`` (a letter dropped, doubled, swapped or replaced), still like it."""
    at = draw(st.integers(0, len(word) - 2))
    kind = draw(st.sampled_from(["drop", "double", "swap", "replace"]))
    slipped = {
        "drop": word[:at] + word[at + 1 :],
        "double": word[:at] + word[at] + word[at:],
        "swap": word[:at] + word[at + 1] + word[at] + word[at + 2 :],
        "replace": word[:at] + draw(st.sampled_from("xqz")) + word[at + 1 :],
    }[kind]
    return word + "x" if slipped == word else slipped
