"""A direct message with the app, its own pane in Slack (the agent or assistant view).

There the app shows that it works the way Slack's AI apps do: an "is working…" status under the person's message
(``assistant.threads.setStatus``) instead of a "working" message edited in the thread; the status follows the
run's progress and is cleared when the answer (or the apology) is posted and when the run stops to wait for an
approval. An assistant thread is titled after its first message. An app without the pane (no ``agent_view`` or
``assistant_view`` in its manifest, or no ``assistant:write`` scope) gets a refusal: the workspace is remembered
for the process and its direct messages get the "working" message, as in channels.
"""

from __future__ import annotations

import re
import threading
from contextlib import suppress

from ..stores import RunStore
from .channels import SlackChannel
from .exceptions import ReplyError
from .replies import SlackReplier

WORKING = 'is working on it… (reply "stop" to stop it)'  # no message to carry a Stop button
STATUS_CHARS = 120  # a status is one short line ("<app> is …")
TITLE_CHARS = 80
_EMOJI = re.compile(r"^(:[a-z0-9_+-]+:\s*)+")
_REFUSED: set[str] = set()  # teams where the status was refused: their direct messages get "working" messages
_LOCK = threading.Lock()


class PaneChannel(SlackChannel):
    """A direct-message thread: a status while the run works, the answer streamed or posted as in a channel."""

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
        assistant_thread: bool = False,
    ) -> None:
        super().__init__(client, target, runs, run_id, thread_id, team=team, user=user)
        self.team, self.assistant_thread = team or self.channel, assistant_thread
        self.showing = False  # the status shows the run's progress (else the "working" message does)

    def begin(self) -> None:
        """The status, unless the workspace refused it or the run began with a "working" message (resumed)."""
        if self.team in _REFUSED or self.runs.progress_message(self.run_id) is not None:
            return super().begin()
        try:
            self.client.set_status(self.channel, self.thread_ts, WORKING)
            self.showing = True
        except ReplyError:
            with _LOCK:
                _REFUSED.add(self.team)
            super().begin()

    def progress(self, text: str) -> None:
        if not self.showing:
            return super().progress(text)
        if not self.stream.started and not self.unreachable:  # a streamed answer shows its own progress (cards)
            with suppress(ReplyError):  # cosmetic
                self._reaching(lambda: self.client.set_status(self.channel, self.thread_ts, status_line(text)))

    def waiting(self, text: str) -> None:
        """The run waits for a decision asked in the thread: nobody is working, so no status."""
        if not self.showing:
            return super().waiting(text)
        self._clear()

    def answer(self, text: str, *, feedback: bool = False) -> None:
        try:
            super().answer(text, feedback=feedback)
        finally:
            self._clear()  # Slack clears it once the app posts; said, so a failed post leaves no "working"

    def title(self, text: str) -> None:
        """An assistant thread is named after its first message (in the app's history of chats)."""
        line = " ".join(text.split())
        if self.assistant_thread and line:
            short = line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"
            with suppress(ReplyError):
                self.client.set_title(self.channel, self.thread_ts, short)

    def _clear(self) -> None:
        if self.showing:
            self.showing = False
            with suppress(ReplyError):
                self.client.set_status(self.channel, self.thread_ts, "")


def status_line(progress: str) -> str:
    """A progress text as a status: Slack shows it after the app's name ("agent is working on it · step 3")."""
    words = _EMOJI.sub("", progress).strip()
    words = words[:1].lower() + words[1:]
    line = words if words.startswith("is ") else f"is {words}"
    return line if len(line) <= STATUS_CHARS else line[: STATUS_CHARS - 1] + "…"


def forget() -> None:
    """Forget the refusals (tests; a process that learns a new scope is a new deployment)."""
    with _LOCK:
        _REFUSED.clear()
