"""An answer streamed into a Slack thread as the model writes it (chat.startStream / appendStream / stopStream).

The stream starts at the first text or tool call, is appended in batches (at most one call a second, or sooner
once enough text waits: Slack's rate tiers), shows each tool call as a task card (``task_update`` chunks in a
``timeline``), and ends with the final answer's blocks (the feedback buttons). What counted stays said: text the
model wrote before calling tools is part of the message, the next model call's text continues it after a blank
line, and the answer (its footer and notes) finishes it. Only what counted: the text of an attempt that failed (and
was retried) or of a call cut short (the deadline, a stop) never joined the history, so it leaves the message —
a retry that writes the same words again changes nothing; one that writes others has the message ended, deleted
and streamed again from what counts (its task cards in their places); a run that ends or suspends with nothing
counted leaves no message. Each ``markdown_text`` chunk stays within Slack's 12,000 characters; special mentions in
model text (``<!channel>``, ``<!here>``, ``<!everyone>``, ``<!subteam^…>``) are neutralised outside code.

Only an error that says the workspace or token cannot stream (``CANNOT_STREAM``) is remembered for the process:
its answers take the plain post/update path. Any other failure ends this stream only; its answer is posted the
plain way. So does Slack out of reach (``UNREACHABLE``, once slack_sdk's retries gave up): the stream is broken at
the first call that cannot reach it, so a run in an outage makes one such call, not one for every batch of text.
"""

from __future__ import annotations

import http.client
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackRequestError

from .mentions import neutralise

logger = logging.getLogger(__name__)
FLUSH_SECONDS = 1.0  # appends at most this often (chat.appendStream is a rate-limited method)
FLUSH_CHARS = 600  # ... or as soon as this much text waits
MAX_CHUNK = 12_000  # characters of one markdown_text chunk (Slack refuses more)
SEPARATOR = "\n\n"  # between the texts of two model calls
CANNOT_STREAM = frozenset(
    {
        "not_allowed_token_type",
        "missing_scope",
        "channel_type_not_supported",
        "feature_not_enabled",
        "not_allowed",
        "team_not_allowed",
        "no_permission",
    }
)
# What slack_sdk raises once its ConnectionErrorRetryHandler gave up (or never retried): a refused connection, a
# DNS failure, a timeout (URLError, TimeoutError: OSError), a connection cut mid-answer (http.client's), a URL it
# will not call. Slack's own refusal is a SlackApiError.
UNREACHABLE: tuple[type[Exception], ...] = (OSError, http.client.HTTPException, SlackRequestError)
FAILED: tuple[type[Exception], ...] = (SlackApiError, *UNREACHABLE)  # what ends a stream
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
        self.on_stop: Callable[[bool], None] | None = None  # ended (True: with the answer): the channel keeps it
        self.broken = False  # a failure part way: the answer is then posted the plain way
        self._raw = ""  # what counted (model calls apart by a blank line), then the current call's text so far
        self._call_at = 0  # where the current model call's text, and the blank line before it, begin in _raw
        self._call_from = 0  # where its text begins
        self._fresh = False  # a new model call began and has said nothing yet
        self._open = False  # a model call is under way: its text counts once it is settled
        self._shown = ""  # what the message shows (neutralised): a prefix of what _raw becomes, or replaced
        self._cards: list[tuple[int, dict[str, Any]]] = []  # every task card, after the text it follows (its length)
        self._unsent = 0  # the cards from this one on are not in the message yet
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
        """A model call begins: its text, if any, follows what was said after a blank line (an earlier call that
        never answered said nothing)."""
        self.discard()
        self._fresh = self._open = True

    def text(self, delta: str) -> None:
        if not delta or not self.usable:
            return
        if self._fresh:
            self._call_at = len(self._raw)
            self._raw += SEPARATOR if self._raw.strip() else ""
            self._call_from, self._fresh = len(self._raw), False
        self._raw += delta
        self._maybe_flush()

    def discard(self) -> None:
        """What the current model call wrote never counted (its attempt failed and is retried, or the call was
        cut short): it leaves the message at the next flush, unless the next attempt writes it again."""
        if self._open and not self._fresh:
            self._raw, self._fresh = self._raw[: self._call_at], True

    def settle(self, text: str) -> None:
        """The current model call answered ``text``: that is what it said (what streamed, unless it differs)."""
        if self._open and (self._raw[self._call_from :] if not self._fresh else "") != text:
            self.discard()
            self.text(text)
        self._open = False

    def task(self, task_id: str, title: str, status: str) -> None:
        """A tool call's card: pending, in_progress, complete or error."""
        if self.usable:
            card = {"type": "task_update", "id": task_id, "title": title[:200], "status": status}
            self._cards.append((len(neutralise(self._raw)), card))
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
        except FAILED as error:
            self._failed(_why(error))
            return False
        self._stopped(answered=True)
        return True

    def close(self) -> None:
        """Ends a stream left open (a run that suspends or waits for approval): what counted stays (a message that
        showed only what did not count goes)."""
        if self.usable:
            self._flush(final=True)
        if self.ts is not None and not self.broken:
            try:
                self.client.chat_stopStream(channel=self.channel, ts=self.ts)
            except FAILED:
                self.broken = True
                return
            self._stopped(answered=False)

    def _stopped(self, *, answered: bool) -> None:
        if self.on_stop is not None:
            self.on_stop(answered)

    def _maybe_flush(self, *, force: bool = False) -> None:
        waiting = len(self._raw) - len(self._shown)
        if force or waiting >= FLUSH_CHARS or self.clock() - self._flushed >= FLUSH_SECONDS:
            self._flush()

    def _flush(self, *, final: bool = False) -> None:
        # A "<" at the very end may open a mention the next delta completes: it waits for it (unless final).
        safe = neutralise(self._raw if final or not self._raw.endswith("<") else self._raw[:-1])
        if not safe.startswith(self._shown):
            if self._open and not final and self._shown.startswith(safe):
                return  # a retry writing again what the failed attempt showed: nothing new yet
            if not self._restart():
                return
        self._flushed = self.clock()
        while self._unsent < len(self._cards):  # the text up to each card's place, then the cards there
            at, there = self._next_cards(len(safe))
            if not self._send_text(safe[:at], there):
                return
            self._unsent += len(there)
        self._send_text(safe, [])

    def _next_cards(self, length: int) -> tuple[int, list[dict[str, Any]]]:
        """The next cards to send that share a place in the text (as far as it is known and not shown yet)."""
        places = [max(min(at, length), len(self._shown)) for at, _ in self._cards[self._unsent :]]
        count = next((n for n, place in enumerate(places) if place != places[0]), len(places))
        return places[0], [card for _, card in self._cards[self._unsent : self._unsent + count]]

    def _send_text(self, upto: str, cards: list[dict[str, Any]]) -> bool:
        """The text from what is shown to the end of ``upto`` (in pieces within Slack's limit), ``cards`` after it."""
        pieces = _pieces(upto[len(self._shown) :]) or [""]
        for number, piece in enumerate(pieces):
            last = number == len(pieces) - 1
            payload = [*([{"type": "markdown_text", "text": piece}] if piece else []), *(cards if last else [])]
            if not payload:
                return True
            if not self._send(payload):
                return False
            self._shown += piece
        return True

    def _restart(self) -> bool:
        """The message shows text that never counted and the next words differ: it is ended and deleted; the
        flush streams what counts into a new one, the task cards again in their places."""
        ts, self.ts, self._shown, self._unsent = self.ts, None, "", 0
        if ts is None:
            return True
        try:
            self.client.chat_stopStream(channel=self.channel, ts=ts)
        except SlackApiError:  # a stream Slack ended already: deleting it is what matters
            pass
        except UNREACHABLE as error:  # deleting it would meet the same outage
            self._failed(_why(error))
            return False
        try:
            self.client.chat_delete(channel=self.channel, ts=ts)
        except FAILED as error:
            self._failed(_why(error))
            return False
        return True

    def _send(self, payload: list[dict[str, Any]]) -> bool:
        try:
            if self.ts is None:
                started = self.client.chat_startStream(
                    channel=self.channel,
                    thread_ts=self.thread_ts,
                    chunks=payload,
                    task_display_mode="timeline",
                    **({"recipient_team_id": self.team} if self.team else {}),
                    **({"recipient_user_id": self.user} if self.user else {}),
                )
                self.ts = str(started["ts"])
                if self.on_start is not None:
                    self.on_start()
            else:
                self.client.chat_appendStream(channel=self.channel, ts=self.ts, chunks=payload)
        except FAILED as error:
            self._failed(_why(error))
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


def _why(error: Exception) -> str:
    """Slack's error by name; for Slack out of reach, the reason (never in ``CANNOT_STREAM``: this stream only)."""
    if isinstance(error, SlackApiError):
        return str(error.response.get("error") or "")
    return f"unreachable: {getattr(error, 'reason', None) or error or type(error).__name__}"


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
