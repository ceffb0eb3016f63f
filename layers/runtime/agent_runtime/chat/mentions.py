"""Special mentions in model text, neutralised: ``<!channel>``, ``<!here>``, ``<!everyone>``, ``<!subteam^…>``
would notify a whole channel or user group because a document the model read said so. Every ``<!`` gets a
zero-width space after its ``<``: the text reads as written and is no longer a command (``<!date…>`` formatting
goes too: a model has no need of it, and a streamed prefix such as ``<!he`` must be safe before its end comes).

Outside fenced code only: inside ```` ``` ```` Slack shows text as written. Inline code is neutralised too —
whether a backtick opens a span is known only when it closes, and a streamed answer must neutralise each prefix
the way it will neutralise the whole (what was sent cannot change); the space is invisible there.
"""

from __future__ import annotations

_FENCE = "```"
ZWSP = "\u200b"


def neutralise(text: str) -> str:
    """``text`` with every special mention outside fenced code made plain text. Idempotent, and the result for a
    prefix of ``text`` is a prefix of the result for ``text``."""
    if "<!" not in text:
        return text
    parts = text.split(_FENCE)
    for index in range(0, len(parts), 2):  # even parts are outside fences (an unclosed fence runs to the end)
        parts[index] = parts[index].replace("<!", "<" + ZWSP + "!")
    return _FENCE.join(parts)
