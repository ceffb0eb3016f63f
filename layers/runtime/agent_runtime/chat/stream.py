"""An answer streamed into a Slack thread as the model writes it (chat.startStream / appendStream / stopStream).

The stream starts at the first text or tool call, is appended in batches (at most one call a second, or sooner
once enough text waits: Slack's rate tiers), shows each tool call as a task card (``task_update`` chunks in a
``timeline``), and ends with the final answer's blocks (the feedback buttons). What was said stays said: text the
model wrote before calling tools is part of the message, the next model call's text continues it after a blank
line, and the answer (its footer and notes) finishes it — the finished message is exactly what was streamed, never
rewritten. Each ``markdown_text`` chunk stays within Slack's 12,000 characters; special mentions in model text
(``<!channel>``, ``<!here>``, ``<!everyone>``, ``<!subteam^…>``) are neutralised outside code.

Only an error that says the workspace or token cannot stream (``CANNOT_STREAM``) is remembered for the process:
its answers take the plain post/update path. Any other failure ends this stream only; its answer is posted the
plain way.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from .mentions import neutralise

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 1.0  # appends at most this often (chat.appendStream is a rate-limited method)
FLUSH_CHARS = 600  # ... or as soon as this much text waits
MAX_CHUNK = 12_000  # characters of one markdown_text chunk (Slack refuses more)
SEPARATOR = "\n\n"  # between the texts of two model calls
CANNOT_STREAM = frozenset({"not_allowed_token_type", "missing_scope", "channel_type_not_supported",
                           "feature_not_enabled", "not_allowed", "team_not_allowed", "no_permission"})  # fmt: skip
_REFUSED: set[str] = set()  # teams (or tokens) that cannot stream: they take the plain path
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
        self.broken = False  # a failure part way: the answer is then posted the plain way
        self._raw = ""  # everything the model said, as it said it (model calls apart by a blank line)
        self._call_from = 0  # where the current model call's text begins in _raw
        self._fresh = False  # a new model call began and has said nothing yet
        self._shown = ""  # what was sent (neutralised): a prefix of what _raw becomes
        self._chunks: list[dict[str, Any]] = []
        self._flushed = clock()

    @property
    def usable(self) -> bool:
        return not self.broken and (self.team or self.channel) not in _REFUSED

    @property
    def started(self) -> bool:
        return self.ts is not None

    @property
    def said(self) -> str:
        """The text streamed so far, as Slack shows it."""
        return self._shown

    def new_call(self) -> None:
        """A model call begins: its text, if any, follows what was said after a blank line."""
        self._fresh = True

    def text(self, delta: str) -> None:
        if not delta or not self.usable:
            return
        if self._fresh:
            self._raw += SEPARATOR if self._raw.strip() else ""
            self._call_from, self._fresh = len(self._raw), False
        self._raw += delta
        self._maybe_flush()

    def task(self, task_id: str, title: str, status: str) -> None:
        """A tool call's card: pending, in_progress, complete or error."""
        if self.usable:
            self._chunks.append({"type": "task_update", "id": task_id, "title": title[:200], "status": status})
            self._maybe_flush(force=True)

    def finish(self, answer: str, blocks: list[dict[str, Any]] | None) -> bool:
        """Ends the stream with the answer and ``blocks`` after it. The answer continues what the last model call
        began (it starts with that text); an answer that does not (an apology, a note) follows what was said.
        False when the answer must be posted the plain way (streaming refused, or broken)."""
        if not self.usable:
            return False
        current = self._raw[self._call_from :] if not self._fresh else ""
        if current and answer.startswith(current):
            self._raw += answer[len(current) :]
        else:
            self._raw += (SEPARATOR if self._raw.strip() else "") + answer
        self._flush(final=True)
        if self.ts is None or self.broken:
            return False
        try:
            self.client.chat_stopStream(channel=self.channel, ts=self.ts, blocks=blocks)
        except SlackApiError as error:
            self._failed(str(error.response.get("error") or ""))
            return False
        return True

    def close(self) -> None:
        """Ends a stream left open (a run that suspends or waits for approval): what was said stays."""
        if self.ts is not None and not self.broken:
            self._flush(final=True)
            try:
                self.client.chat_stopStream(channel=self.channel, ts=self.ts)
            except SlackApiError:
                self.broken = True

    def _maybe_flush(self, *, force: bool = False) -> None:
        waiting = len(self._raw) - len(self._shown)
        if force or waiting >= FLUSH_CHARS or self.clock() - self._flushed >= FLUSH_SECONDS:
            self._flush()

    def _flush(self, *, final: bool = False) -> None:
        # A "<" at the very end may open a mention the next delta completes: it waits for it (unless final).
        safe = neutralise(self._raw if final or not self._raw.endswith("<") else self._raw[:-1])
        text = safe[len(self._shown) :] if safe.startswith(self._shown) else ""
        pieces = _pieces(text) if text else [""]
        chunks, self._chunks, self._flushed = self._chunks, [], self.clock()
        for number, piece in enumerate(pieces):
            payload = [*([{"type": "markdown_text", "text": piece}] if piece else []), *(chunks if number == 0 else [])]
            if not payload or not self._send(payload):
                return
            self._shown += piece

    def _send(self, payload: list[dict[str, Any]]) -> bool:
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
            self._failed(str(error.response.get("error") or ""))
            return False
        return True

    def _failed(self, why: str) -> None:
        self.broken = True
        if why in CANNOT_STREAM:  # the workspace or token cannot stream: remembered for the process
            logger.warning("error=<%s> | Slack refused the stream: answers are posted the plain way", why)
            with _LOCK:
                _REFUSED.add(self.team or self.channel)
        else:  # this stream only (a size, a rate, a hiccup): the next answer streams again
            logger.warning("error=<%s> | the stream failed: this answer is posted the plain way", why)


def _pieces(text: str) -> list[str]:
    """``text`` in pieces of at most MAX_CHUNK characters, cut at a line's end where one is near."""
    pieces = []
    while len(text) > MAX_CHUNK:
        cut = text.rfind("\n", MAX_CHUNK // 2, MAX_CHUNK)
        cut = cut + 1 if cut > 0 else MAX_CHUNK
        pieces.append(text[:cut])
        text = text[cut:]
    return [*pieces, text] if text else pieces


def forget() -> None:
    """Tests: what was learned of workspaces goes."""
    with _LOCK:
        _REFUSED.clear()
