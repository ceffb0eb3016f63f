"""A reply's reasoning, kept from people: the ``<think>…</think>`` block a reasoning model served as plain content
writes before its words (Qwen3 and DeepSeek-R1 on llama.cpp, Ollama or vLLM without a reasoning parser).

The model's history keeps the whole content, as the server sent it (a chat template drops old reasoning itself, and
a model that keeps notes there reads them back); what people see — the streamed answer, the final answer, a
script's ``run.ask`` — is what follows the block. Only a block that opens the reply counts: a ``<think>`` later in
the words (a model writing about tags) is words. A block never closed (a reply cut at its limit) hides the rest.
"""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


def visible(text: str) -> str:
    """What people see of a whole reply: its words after any reasoning blocks that open it."""
    rest, blocks = _after_blocks(text)
    if rest is None:
        return ""
    return rest.lstrip() if blocks else text


def _after_blocks(text: str) -> tuple[str | None, bool]:
    """The text after the closed blocks that open it, and whether there were any (None: inside one)."""
    rest, blocks = text, False
    while rest.lstrip().startswith(OPEN):
        end = rest.find(CLOSE)
        if end < 0:
            return None, True
        rest, blocks = rest[end + len(CLOSE) :], True
    return rest, blocks


class VisibleStream:
    """The same, for a reply arriving in pieces: each piece's visible part, as soon as it is known. What might
    still open a block (leading spaces, a partial ``<thi``) waits for the next piece; what the whole reply shows
    is settled from the whole reply (``visible``), as the answer's stream does after each call."""

    def __init__(self) -> None:
        self._head = ""  # the reply so far, while it may still be (or open) reasoning
        self._decided = False

    def feed(self, piece: str) -> str:
        if self._decided:
            return piece
        self._head += piece
        rest, blocks = _after_blocks(self._head)
        if rest is None:
            return ""  # inside a block
        start = rest.lstrip()
        if not start or OPEN.startswith(start):
            return ""  # spaces, or what may open a block: the next piece says
        self._decided = True
        return start if blocks else rest
