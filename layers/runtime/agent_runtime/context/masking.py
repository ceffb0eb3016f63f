"""Masking: a used tool output gives way to a pointer — where it can be read again (the same ``file_read`` range,
the virtual file, or a file of its own) and the identifiers it named — so the model keeps sight of what it found
without carrying it. Outputs of mutating tools, pinned tools (skills) and kept ones (conclusions) are never masked.
The rolling mask (``rolling.py``), folding and compaction all mask through one ``Masker``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .. import messages as msgs
from ..files.store import file_id_for
from ..messages import Message, text_of
from .counter import TokenCounter
from .history import MASK_MARK, VIRTUAL_MARK
from .identifiers import identifiers_in
from .ladder import naming
from .ledger import RunLedger

if TYPE_CHECKING:
    from ..steps import Run

MIN_MASK_TOKENS = 200  # smaller outputs are cheaper to keep than to point at
MASK_NAMED = 5
_VIRTUAL_HEADER = re.compile(re.escape(VIRTUAL_MARK) + r"(?P<id>file-[0-9a-f]+):")
_READ_HEADER = re.compile(r"^\[(?P<name>.+) \((?P<id>file-[0-9a-f]+)\) lines (?P<a>\d+)-(?P<b>\d+) of \d+[\];]")


class Masker:
    """Which outputs may be masked, and their pointers."""

    def __init__(self, counter: TokenCounter, *, unmaskable: set[str]) -> None:
        self.counter = counter
        self.unmaskable = unmaskable  # tools whose outputs stay: mutating, pinned (skills), kept (conclusions)

    def mask(self, run: Run, messages: list[Message], *, enough: Callable[[list[Message]], bool]) -> list[Message]:
        """Replace used tool outputs, oldest first, with pointers to where they can be read again."""
        return self.mask_these(run, messages, self.maskable(messages), enough=enough)

    def mask_these(
        self,
        run: Run,
        messages: list[Message],
        outputs: list[tuple[int, str]],
        *,
        enough: Callable[[list[Message]], bool] = lambda _: False,
    ) -> list[Message]:
        """Replace the given outputs ((index, tool name), oldest first) with pointers."""
        result = list(messages)
        for index, name in outputs:
            message = result[index]
            pointer = self._pointer(run, message, name, self.counter.message(message))
            result[index] = msgs.tool_result(message.get("tool_call_id", ""), pointer)
            if enough(result):
                break
        return result

    def maskable(self, messages: list[Message]) -> list[tuple[int, str]]:
        """(index, tool name) of outputs worth masking: used (the model answered after them), not from a
        mutating tool, not already a pointer, and big enough to be worth a pointer."""
        last_assistant = max((i for i, m in enumerate(messages) if m["role"] == "assistant"), default=0)
        return self.maskable_between(messages, 0, last_assistant, msgs.tool_names(messages))

    def maskable_between(
        self, messages: list[Message], start: int, end: int, names: dict[str, str]
    ) -> list[tuple[int, str]]:
        """:meth:`maskable` over ``messages[start:end]``, with the tool names of the calls seen so far (the
        engine's rolling mask scans only what is new each turn)."""
        found = []
        for index in range(start, end):
            message = messages[index]
            for call in message.get("tool_calls", []):
                names[call["id"]] = call["function"]["name"]
            name = names.get(message.get("tool_call_id", ""), "")
            kept = name in self.unmaskable
            if message["role"] != "tool" or kept or text_of(message).startswith(MASK_MARK):
                continue
            if self.counter.message(message) >= MIN_MASK_TOKENS:
                found.append((index, name))
        return found

    def pointer_tokens(self, message: Message, tool: str) -> int:
        """The size the output's pointer will have (nothing is stored): what masking it would save."""
        pointer = self._pointer(None, message, tool, self.counter.message(message))
        return self.counter.message(msgs.tool_result(message.get("tool_call_id", ""), pointer))

    def _pointer(self, run: Run | None, message: Message, tool: str, tokens: int) -> str:
        """Where a masked output is, and the identifiers it named (ticket keys, ids, paths, numbers): the model
        keeps sight of what it found without reading it again. ``run`` None: the text only, nothing stored."""
        return naming(self._where(run, message, tool, tokens), identifiers_in(text_of(message)), MASK_NAMED)

    def _where(self, run: Run | None, message: Message, tool: str, tokens: int) -> str:
        text = text_of(message)
        read = _READ_HEADER.match(text)
        if read:
            a, b, fid = read["a"], read["b"], read["id"]
            return (
                f"{MASK_MARK}{read['name']} lines {a}-{b} ({fid}), {tokens:,} tokens: the same file_read call "
                "returns them again]"
            )
        virtual = _VIRTUAL_HEADER.match(text)
        if virtual:
            fid = virtual["id"]
            return f'{MASK_MARK}the preview of virtual file {fid}; again: file_read(id="{fid}")]'
        name, data = f"{tool}-{message.get('tool_call_id', 'result')}.txt", text.encode("utf-8")
        fid = file_id_for(name, data)
        if run is not None:
            meta = run.context.files.put(data, name=name, mimetype="text/plain", source="archive")
            run.record.files.append(meta.to_dict())
            if isinstance(run.context.ledger, RunLedger):
                run.context.ledger.seen_whole(meta, text)
        return f'{MASK_MARK}the {tool} result, {tokens:,} tokens; again: file_read(id="{fid}")]'
