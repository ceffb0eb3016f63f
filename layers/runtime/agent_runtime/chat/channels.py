"""A channel per chat surface: where a run started and answers (a Slack thread, a JIRA issue, or nowhere).

The worker only orchestrates; what "show progress", "answer", "attach files", "say a note" and "download an
attachment" mean on each surface lives here, so a new surface (or the approvals and tools built on these) is one
class, not another ``if event.source == ...`` in the worker.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from ..actions import APPROVE, DENY
from ..approvals import ApprovalRequest
from ..inbound import TriggerEvent
from ..messages import quoted
from ..stores import RunStore
from ..stores.items import Asked
from .exceptions import ReplyError, Unreachable
from .replies import SLACK_CHUNK, JiraReplier, SlackReplier, feedback_blocks, working_blocks
from .stream import AnswerStream

OPEN, ANSWERED, STOPPED, GONE = "open", "answered", "stopped", "gone"  # an answer stream's states (``Streamed``)
WORKING = ":hourglass_flowing_sand: Working on it…"
WRITING = ":writing_hand: Writing the answer below…"
EXPIRED = "expired: nobody decided in time, so it was not run"
CLOSED = "closed: its run ended before anyone decided, so it was not run"
JIRA_INLINE_CHARS = 20_000  # of the arguments in the comment (JIRA's limit is 32,767 characters); the rest attached
EARLIER_MESSAGES = 50  # a thread's messages before the mention, in the first turn (larger: a virtual file)
MAX_THREAD_PAGES = 25  # of 200 messages, read to find the ones just before the mention
QUOTED_CHARS = 4_000  # of one earlier message


@dataclass
class Replies:
    """The clients the deployment has credentials for (either may be missing)."""

    slack: SlackReplier | None = None
    jira: JiraReplier | None = None


class Channel:
    """A run with no chat surface (started by name through /runs): nothing is shown and nothing downloaded."""

    name = "none"

    def begin(self) -> None:
        """Show that the run has started (once per run, however often it resumes)."""

    def progress(self, text: str) -> None:
        """Replace the progress message's text."""

    def waiting(self, text: str) -> None:
        """The run stops to wait for a person (an approval asked in the conversation): say so."""
        self.progress(text)

    def title(self, text: str) -> None:
        """Name the conversation after its first message, where the surface names conversations."""

    def answer(self, text: str, *, feedback: bool = False) -> None:
        """Post the run's answer (once: the worker journals it); ``feedback``: with buttons to rate it."""

    def attach(self, files: Sequence[tuple[str, bytes]]) -> int:
        """Attach files to the answer; returns how many were attached. Raises ``ReplyError`` if refused."""
        return 0

    def note(self, text: str) -> None:
        """A short message after the answer (a refused upload, ...)."""

    def download(self, url: str, limit: int) -> bytes:
        raise ReplyError(f"no {self.name} credentials to download attachments")

    def earlier(self, event: TriggerEvent) -> str:
        """What was said before the run's message in the same conversation (a Slack thread the bot joins)."""
        return ""

    def ask_approval(self, request: ApprovalRequest, thread_id: str) -> Asked | None:
        """Ask the people of the conversation to approve a call; where the question is (None: cannot ask)."""
        return None

    def approval_decided(self, asked: Asked, request_tool: str, decision: str, who: str) -> None:
        """Show the decision where the question was asked."""

    def tell(self, user: str, text: str) -> None:
        """A word to one person (a refused approver)."""


class SlackChannel(Channel):
    """A thread: a "working" message updated as the run goes, replaced by the answer; files into the thread."""

    name = "slack"

    def __init__(
        self,
        client: SlackReplier,
        target: dict[str, str],
        runs: RunStore,
        run_id: str,
        thread_id: str = "",
        *,
        team: str | None = None,
        user: str | None = None,
    ) -> None:
        self.client, self.runs, self.run_id, self.thread_id = client, runs, run_id, thread_id
        self.channel, self.thread_ts = target["channel"], target["thread_ts"]
        self.ts: str | None = None  # the progress message, kept with the run: a resumed run edits the same one
        self.unreachable = False  # a progress update could not reach Slack: no more are tried
        # The answer streams into the thread as it is written (the plain path where Slack refuses streams).
        self.stream = AnswerStream(client.client, channel=self.channel, thread_ts=self.thread_ts, team=team, user=user)
        self.stream.on_start, self.stream.on_stop = self._streaming, self._stream_ended

    def begin(self) -> None:
        """The "working" message, with its Stop button (kept with the run: a resumed run edits the same one, and
        ends the answer a cut-off invocation left streaming: this one streams it whole)."""
        self.ts = self.runs.progress_message(self.run_id)
        if self.ts is None:
            self.ts = self.client.post_blocks(self.channel, self.thread_ts, self._working(WORKING), WORKING)
            self.runs.save_progress_message(self.run_id, self.ts)
        elif self._end_left():  # it said "writing the answer below": that answer went
            with suppress(ReplyError):
                self.client.update_blocks(self.channel, self.ts, self._working(WORKING), WORKING)

    def _working(self, text: str) -> list[dict[str, Any]]:
        return working_blocks(text, f"{self.run_id}|{self.thread_id}" if self.thread_id else None)

    def _streaming(self) -> None:
        """The answer's stream began (kept with the run, so that a later invocation can end it if this one is cut
        off): the working message says so and keeps its Stop button; it goes when the answer is finished."""
        if self.stream.ts is not None:
            self.runs.save_answer_stream(self.run_id, self.stream.ts, OPEN)
        working = self.ts or self.runs.progress_message(self.run_id)
        if working:
            with suppress(ReplyError):  # cosmetic: it stays, saying it was working
                self.client.update_blocks(self.channel, working, self._working(WRITING), WRITING)

    def _stream_ended(self, answered: bool) -> None:
        if self.stream.ts is not None:
            self.runs.save_answer_stream(self.run_id, self.stream.ts, ANSWERED if answered else STOPPED)

    def _end_left(self) -> bool:
        """The stream an earlier invocation of the run left open (it was cut off: a Lambda timeout, serve stopped)
        is ended and deleted — never left with its cursor, nor beside the answer this invocation streams whole
        (what it showed was what it had, not what counts). False: none was left open."""
        left = self.runs.answer_stream(self.run_id)
        if left is None or left.state != OPEN or left.ts == self.stream.ts:
            return False
        with suppress(ReplyError):  # Slack may have ended it already; deleting it is what matters
            self.client.stop_stream(self.channel, left.ts)
        with suppress(ReplyError):  # deleted already
            self.client.delete(self.channel, left.ts)
        self.runs.save_answer_stream(self.run_id, left.ts, GONE)
        return True

    def _done_working(self) -> None:
        working, self.ts = self.ts or self.runs.progress_message(self.run_id), None
        if working:
            with suppress(ReplyError):  # cosmetic: it stays, saying it was working
                self.client.delete(self.channel, working)

    def progress(self, text: str) -> None:
        if self.stream.started or self.unreachable:
            return
        if self.ts is not None:
            self._reaching(lambda: self.client.update_blocks(self.channel, self.ts or "", self._working(text), text))

    def _reaching(self, update: Callable[[], object]) -> None:
        """A progress update. Once Slack could not be reached, the run's later ones are not tried: each would wait
        out slack_sdk's retries, for a message the answer replaces."""
        try:
            update()
        except Unreachable:
            self.unreachable = True
            raise

    def answer(self, text: str, *, feedback: bool = False) -> None:
        value = f"{self.run_id}|{self.thread_id}" if feedback and self.thread_id else None
        if not self.stream.started:  # what an earlier invocation, cut off, left of the answer
            left = self.runs.answer_stream(self.run_id)
            if left is not None and left.state == ANSWERED:  # streamed whole: only the working message was left
                self._done_working()
                return
            self._end_left()
        # A stream under way ends with the answer, however long; a long one not yet streamed goes in parts.
        if (self.stream.started or len(text) <= SLACK_CHUNK) and self._streamed(text, value):
            self._done_working()  # the answer is in the stream's message: the working one goes
            return
        progress = self.ts or self.runs.progress_message(self.run_id)
        self.client.answer(self.channel, self.thread_ts, progress, text, feedback=value)

    def _streamed(self, text: str, value: str | None) -> bool:
        """The answer through the stream (started or not): the feedback buttons after its text."""
        buttons = feedback_blocks("", value)[-1:] if value else None
        return self.stream.finish(text, buttons)

    def attach(self, files: Sequence[tuple[str, bytes]]) -> int:
        self.client.upload(self.channel, self.thread_ts, files)
        return len(files)

    def note(self, text: str) -> None:
        self.client.post(self.channel, self.thread_ts, text)

    def download(self, url: str, limit: int) -> bytes:
        return self.client.download(url, limit)

    def ask_approval(self, request: ApprovalRequest, thread_id: str) -> Asked | None:
        value = f"{request.run_id}|{request.call_id}|{thread_id}"  # ids only: the arguments stay in the run
        ts = self.client.post_blocks(
            self.channel, self.thread_ts, approval_blocks(request, value), f"Approval needed: {request.tool}"
        )
        if request.shown()[1]:  # too long for a message: the whole of what would run, as a file in the thread
            self.attach([(f"arguments-{request.tool}-{request.code}.json", request.summary.encode())])
        return Asked(ts=ts)

    def approval_decided(self, asked: Asked, request_tool: str, decision: str, who: str) -> None:
        """The request's message says the decision, and its buttons go (an update without ``blocks`` would keep
        them: Slack retains a message's blocks unless the update gives new ones)."""
        if decision in ("expired", "closed"):  # a click now would decide nothing
            mark, said = (":hourglass:", EXPIRED) if decision == "expired" else (":octagonal_sign:", CLOSED)
            text = f"{mark} `{request_tool}`: {said}"
        else:
            mark = ":white_check_mark:" if decision == "approved" else ":no_entry_sign:"
            text = f"{mark} `{request_tool}`: {decision} by <@{who}>"
        self.client.update_blocks(self.channel, asked.ts, [], text)

    def tell(self, user: str, text: str) -> None:
        self.client.ephemeral(self.channel, user, text, self.thread_ts)

    def earlier(self, event: TriggerEvent) -> str:
        """The thread's messages before the mention (at most ``EARLIER_MESSAGES``), when mentioned inside an
        existing thread. A failure costs the history, not the run (the scope may be missing)."""
        ts = str(event.attributes.get("ts") or "")
        if not ts or ts == self.thread_ts:
            return ""
        before: deque[dict[str, Any]] = deque(maxlen=EARLIER_MESSAGES)  # the last ones before the mention
        cursor: str | None = None
        try:
            for _ in range(MAX_THREAD_PAGES):
                messages, cursor = self.client.thread(self.channel, self.thread_ts, cursor=cursor, limit=200)
                before.extend(m for m in messages if _ts(m) < float(ts))
                if cursor is None or any(_ts(m) >= float(ts) for m in messages):
                    break
        except ReplyError:
            return ""
        return "\n".join(slack_line(m, quote=True) for m in before)


def slack_line(message: Mapping[str, Any], *, quote: bool = False) -> str:
    """One message of a thread: when, who, what, and the files it carried. ``quote``: the text as one quoted line
    (other people's words framed in a prompt: they cannot open a line or a section of their own, so none can
    forge the frame around them, such as the message to answer)."""
    when = datetime.fromtimestamp(_ts(message), UTC).strftime("%Y-%m-%d %H:%M")
    who = str(message.get("user") or message.get("bot_id") or "unknown")
    who = who if _ID.fullmatch(who) else quoted(who, 40)  # an id, or a quoted string: never a line of its own
    files = [
        f"{quoted(str(f.get('name')), 200)} ({quoted(str(f.get('mimetype')), 80)}, {_size(f)} bytes)"
        for f in message.get("files") or []
        if isinstance(f, Mapping)
    ]
    attached = f" [files: {'; '.join(files)}]" if files else ""
    text = str(message.get("text", ""))
    return f"{when} <@{who}>: {quoted(text, QUOTED_CHARS) if quote else text}{attached}"


_ID = re.compile(r"[A-Z0-9]{2,40}")


def _size(file: Mapping[str, Any]) -> str:
    size = file.get("size", 0)
    return f"{size:,}" if isinstance(size, int) and not isinstance(size, bool) else "?"


def _ts(message: Mapping[str, Any]) -> float:
    try:
        return float(message.get("ts", 0))
    except (TypeError, ValueError):
        return 0.0


class JiraChannel(Channel):
    """An issue: the answer as a comment, files as attachments. JIRA has no message to edit, so no progress."""

    name = "jira"

    def __init__(self, client: JiraReplier, issue_key: str) -> None:
        self.client, self.issue_key = client, issue_key

    def answer(self, text: str, *, feedback: bool = False) -> None:
        self.client.comment(self.issue_key, text)

    def attach(self, files: Sequence[tuple[str, bytes]]) -> int:
        self.client.attach(self.issue_key, files)
        return len(files)

    def note(self, text: str) -> None:
        self.client.comment(self.issue_key, text)

    def ask_approval(self, request: ApprovalRequest, thread_id: str) -> Asked | None:
        shown, cut = request.shown(JIRA_INLINE_CHARS)
        comment = self.client.comment_doc(self.issue_key, approval_doc(request, shown))
        if cut:
            self.attach([(f"arguments-{request.tool}-{request.code}.json", request.summary.encode())])
        return Asked(comment=comment, code=request.code)

    def approval_decided(self, asked: Asked, request_tool: str, decision: str, who: str) -> None:
        said = {"expired": EXPIRED, "closed": CLOSED}.get(decision) or f"{decision} by {who}"
        self.client.comment(self.issue_key, f"`{request_tool}`: {said}.")

    def tell(self, user: str, text: str) -> None:
        self.client.comment(self.issue_key, text)

    def download(self, url: str, limit: int) -> bytes:
        return self.client.download(url, limit)


def approval_blocks(request: ApprovalRequest, value: str) -> list[dict[str, Any]]:
    """A Block Kit message: what would run, and Approve / Deny buttons carrying only ids. The arguments are
    model-written: they go in a preformatted rich-text element, which Slack shows as literal text (no mrkdwn, no
    mentions, no way out of the block), never in mrkdwn."""
    until = datetime.fromtimestamp(request.expires_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    shown, _ = request.shown()
    ask = f":raised_hand: Approval needed to run `{request.tool}` (until {until}):"
    literal = {"type": "rich_text_preformatted", "elements": [{"type": "text", "text": shown}]}
    return [
        {"type": "section", "text": {"type": "mrkdwn", "text": ask}},
        {"type": "rich_text", "elements": [literal]},
        {
            "type": "actions",
            "block_id": "approval",
            "elements": [
                {
                    "type": "button",
                    "action_id": APPROVE,
                    "style": "primary",
                    "value": value,
                    "text": {"type": "plain_text", "text": "Approve"},
                },
                {
                    "type": "button",
                    "action_id": DENY,
                    "style": "danger",
                    "value": value,
                    "text": {"type": "plain_text", "text": "Deny"},
                },
            ],
        },
    ]


def approval_doc(request: ApprovalRequest, shown: str) -> dict[str, Any]:
    """A JIRA comment asking for approval, built as a document (the arguments in a code block as literal text:
    never through Markdown, where a line of backticks would end the block)."""
    until = datetime.fromtimestamp(request.expires_at, UTC).strftime("%Y-%m-%d %H:%M UTC")

    def text(words: str, *marks: str) -> dict[str, Any]:
        return {"type": "text", "text": words} | ({"marks": [{"type": mark} for mark in marks]} if marks else {})

    return {
        "type": "doc",
        "version": 1,
        "content": [
            {
                "type": "paragraph",
                "content": [
                    text("Approval needed before running "),
                    text(request.tool, "code"),
                    text(f" (until {until}) with:"),
                ],
            },
            {"type": "codeBlock", "content": [text(shown)]},
            {
                "type": "paragraph",
                "content": [
                    text("Reply with a comment saying just "),
                    text("approve", "strong"),
                    text(" or "),
                    text("deny", "strong"),
                    text(f" (with several requests waiting: approve {request.code})."),
                ],
            },
        ],
    }
