"""Running totals over the part of the history that has not changed, so a turn costs O(new messages).

The loop only appends to the history; the engine replaces messages only when it compacts, masks or offloads,
and resets the tally then. The identity of the last message seen guards against anything else.
"""

from __future__ import annotations

import threading

from ..messages import Message, OrphanCheck, text_of
from .counter import REPLY_PRIMING, TokenCounter
from .history import SUMMARY_MARK, VIRTUAL_MARK

CATEGORIES = ("system", "history", "files inline", "summary")


class WindowTally:
    def __init__(self, counter: TokenCounter) -> None:
        self.counter = counter
        self._lock = threading.Lock()  # parallel tool calls ask for the budget at the same time
        self.reset()

    def reset(self) -> None:
        self.seen = 0
        self.last: Message | None = None
        self.tokens = REPLY_PRIMING
        self.split = dict.fromkeys(CATEGORIES, 0)
        self.check = OrphanCheck()
        self.leading = True

    def update(self, messages: list[Message]) -> WindowTally:
        with self._lock:
            if self.seen > len(messages) or (self.seen and messages[self.seen - 1] is not self.last):
                self.reset()
            count = len(messages)  # the list may grow while we read it: stop at what we saw
            for index in range(self.seen, count):
                self._add(index, messages[index])
            self.seen = count
            self.last = messages[count - 1] if count else None
        return self

    def _add(self, index: int, message: Message) -> None:
        tokens = self.counter.message(message)
        self.tokens += tokens
        self.check.feed(index, message)
        self.leading = self.leading and message["role"] == "system"
        self.split[self._category(message)] += tokens

    def _category(self, message: Message) -> str:
        if self.leading:
            return "system"
        text = text_of(message)
        if text.startswith(SUMMARY_MARK):
            return "summary"
        return "files inline" if text.startswith(VIRTUAL_MARK) else "history"
