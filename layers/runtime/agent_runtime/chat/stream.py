"""An answer streamed into a Slack thread as the model writes it (chat.startStream / appendStream / stopStream).

The stream starts at the first text the model writes, is appended in batches (at most one call a second, or
sooner once enough text waits: Slack's rate tiers), shows each tool call as a task card (``task_update``
chunks in a ``timeline``), and ends with the final answer's blocks (the feedback buttons). Its text ends equal to
the answer: text the model wrote before calling tools stays as it was said, and when what was streamed differs
from the answer, the finished message is replaced by the answer.

A workspace or token where streaming is refused (an older plan, a missing scope, a channel type it does not
support) is remembered for the process: its answers take the plain post/update path.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 1.0  # appends at most this often (chat.appendStream is a rate-limited method)
FLUSH_CHARS = 600  # ... or as soon as this much text waits
_REFUSED: set[str] = set()  # teams (or tokens) where streaming was refused: they take the plain path
_LOCK = threading.Lock()


class AnswerStream:
    """One answer's stream. Not started until there is text or a task to show; ``usable`` says whether the
    workspace accepts streams (False: the caller posts the answer the plain way)."""

    def __init__(
        self,
        client: WebClient,
        *,
        channel: str,
        thread_ts: str,
        team: str | None,
        user: str | None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client, self.channel, self.thread_ts, self.team, self.user = client, channel, thread_ts, team, user
        self.clock = clock
        self.ts: str | None = None
        self.on_start: Callable[[], None] | None = None  # the channel's cue: the "working" message can go
        self.sent: list[str] = []  # the text streamed so far
        self.broken = False  # a failure part way: the answer is then posted the plain way
        self._text: list[str] = []
        self._chunks: list[dict[str, Any]] = []
        self._flushed = clock()

    @property
    def usable(self) -> bool:
        return not self.broken and (self.team or self.channel) not in _REFUSED

    @property
    def started(self) -> bool:
        return self.ts is not None

    def text(self, delta: str) -> None:
        if delta and self.usable:
            self._text.append(delta)
            self._maybe_flush()

    def task(self, task_id: str, title: str, status: str) -> None:
        """A tool call's card: pending, in_progress, complete or error."""
        if self.usable:
            self._chunks.append({"type": "task_update", "id": task_id, "title": title[:200], "status": status})
            self._maybe_flush(force=True)

    def finish(
        self, answer: str, blocks: list[dict[str, Any]] | None, whole: tuple[str, list[dict[str, Any]] | None]
    ) -> bool:
        """Ends the stream with the answer (Markdown: its text equal to ``answer``) and ``blocks`` after it; when
        what was streamed differs, the message becomes ``whole`` (its text and blocks as a plain answer would be).
        False when the answer must be posted the plain way (streaming refused, never started, or broken)."""
        if not self.usable:
            return False
        if self.ts is None:
            self._text = [answer]  # nothing streamed yet: the whole answer in one go
        else:
            streamed = "".join(self.sent) + "".join(self._text)  # said, and still waiting to be sent
            if answer.startswith(streamed):
                self._text.append(answer[len(streamed) :])  # what the answer adds (its footer, a note)
            else:
                self._text = []  # the message is replaced by the answer below
        self._flush()
        if self.ts is None:
            return False
        try:
            self.client.chat_stopStream(channel=self.channel, ts=self.ts, blocks=blocks)
            if "".join(self.sent) != answer:  # interim text the answer left out: the message becomes the answer
                self.client.chat_update(channel=self.channel, ts=self.ts, text=whole[0], blocks=whole[1])
        except SlackApiError as error:
            logger.warning("error=<%s> | the stream could not be finished", error.response.get("error"))
            self.broken = True
            return False
        return True

    def close(self) -> None:
        """Ends a stream left open (a run that suspends or waits for approval): what was said stays."""
        if self.ts is not None and not self.broken:
            self._flush()
            try:
                self.client.chat_stopStream(channel=self.channel, ts=self.ts)
            except SlackApiError:
                self.broken = True

    def _maybe_flush(self, *, force: bool = False) -> None:
        waiting = sum(len(part) for part in self._text)
        if force or waiting >= FLUSH_CHARS or self.clock() - self._flushed >= FLUSH_SECONDS:
            self._flush()

    def _flush(self) -> None:
        text, chunks = "".join(self._text), list(self._chunks)
        if not text and not chunks:
            return
        self._text, self._chunks, self._flushed = [], [], self.clock()
        payload = [*([{"type": "markdown_text", "text": text}] if text else []), *chunks]
        try:
            if self.ts is None:
                started = self.client.chat_startStream(
                    channel=self.channel, thread_ts=self.thread_ts, chunks=payload, task_display_mode="timeline",
                    **({"recipient_team_id": self.team} if self.team else {}),
                    **({"recipient_user_id": self.user} if self.user else {}),
                )  # fmt: skip
                self.ts = str(started["ts"])
                if self.on_start is not None:
                    self.on_start()
            else:
                self.client.chat_appendStream(channel=self.channel, ts=self.ts, chunks=payload)
        except SlackApiError as error:
            self._refused(str(error.response.get("error") or ""))
            return
        self.sent.append(text)

    def _refused(self, why: str) -> None:
        logger.warning("error=<%s> | Slack refused the stream: answers are posted the plain way", why)
        self.broken = True
        if self.ts is None:  # refused from the start: the workspace does not stream (remembered)
            with _LOCK:
                _REFUSED.add(self.team or self.channel)


def forget() -> None:
    """Tests: what was learned of workspaces goes."""
    with _LOCK:
        _REFUSED.clear()
