"""What a finished run tells beyond its thread: a signed link to its page (the answer's footer carries it), a
line in the runs channel (``AGENT_RUNS_CHANNEL``) — workflow, trigger, status, cost, duration, then its ratings
as they come — with the page's link, and its metrics (``metrics``).

The rule for private conversations (a private channel, a direct or group message, or a channel Slack will not
describe): the answer's link opens a page marked private, posted only where the conversation already is; the runs
channel's line names no channel and carries no link, so the conversation's words never reach the runs channel."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress

from aws_lambda_powertools import Logger

from ..chat.channels import Replies
from ..chat.exceptions import ReplyError
from ..chat.surface import Surfaces
from ..config import RuntimeConfig
from ..inbound import TriggerEvent
from ..pages.links import KEY, PageLinks
from ..reading.figures import figures, requester_of
from ..record import RunRecord
from ..sources import BUILTIN, Sources
from ..sources.base import safe
from ..stores import RunStore
from ..stores.items import Announced
from ..toolsets.secrets import Secrets
from ..views.run import StoredRun, whole_run
from .metrics import RunMetrics

MARKS = {
    "completed": ":white_check_mark:",
    "failed": ":x:",
    "stopped": ":octagonal_sign:",
    "cost_limit": ":money_with_wings:",
    "tool_call_limit": ":warning:",
}


class Reports:
    def __init__(
        self,
        config: RuntimeConfig,
        runs: RunStore,
        secrets: Secrets,
        replies: Callable[[], Replies],
        log: Logger,
        clock: Callable[[], float],
        metrics: RunMetrics | None = None,
        sources: Sources = BUILTIN,
    ) -> None:
        self.config, self.runs, self.secrets, self.replies, self.log, self.clock = (
            config,
            runs,
            secrets,
            replies,
            log,
            clock,
        )
        self.metrics, self.sources = metrics, sources

    def page(self, event: TriggerEvent, record: RunRecord) -> tuple[str | None, bool]:
        """The run page's link (None: pages are not set up) and whether the run came from a private place. A
        failure (the secret unreadable, Slack down) costs the link, never the answer; the run counts as private."""
        try:
            return self._page(event, record)
        except Exception as error:  # anything: the answer goes out without its link
            self.log.warning("no page link", extra={"error": type(error).__name__})
            return None, True

    def _page(self, event: TriggerEvent, record: RunRecord) -> tuple[str | None, bool]:
        key = self.secrets(KEY) if self.config.api_url else None
        private = self._private(event) if (key or self.config.runs_channel) else False  # one Slack call, if asked
        if not (key and self.config.api_url):
            return None, private
        links = PageLinks(self.config.api_url, key, self.config.run_page_days)
        return links.url(record.run_id, self.clock(), private=private), private

    def finished(self, event: TriggerEvent, record: RunRecord, link: str | None, private: bool) -> None:
        """The run's metrics, and its line in the runs channel: after the answer, so a failure here costs them, not
        a redelivery of a message whose answer is out. Each apart: one failing never costs the other."""
        stored, metrics = whole_run(self.runs, record, self._unread), self.metrics
        if metrics is not None:
            self._apart(
                "run metrics not emitted",
                lambda: metrics.ended(figures(stored, event.source, requester_of(event.source, event.user))),
            )
        self._apart("runs channel line not posted", lambda: self._announce(event, record.run_id, stored, link, private))

    def _unread(self, error: Exception) -> None:
        """The store unreadable: this invocation's figures are still worth reporting."""
        self.log.warning("run record not read for its reports", extra={"error": type(error).__name__})

    def _apart(self, what: str, report: Callable[[], object]) -> None:
        try:
            report()
        except Exception as error:  # anything: the answer is out; a redelivery would post nothing more
            self.log.warning(what, extra={"error": type(error).__name__})

    def _announce(self, event: TriggerEvent, run_id: str, stored: StoredRun, link: str | None, private: bool) -> None:
        slack = self.replies().slack
        if not self.config.runs_channel or slack is None:
            return
        text = line(event, stored, None if private else link, private, self.sources)
        try:
            ts = slack.post(self.config.runs_channel, "", text)
        except ReplyError as error:
            self.log.warning("runs channel line not posted", extra={"reason": str(error)})
            return
        self.runs.save_announced(run_id, Announced(self.config.runs_channel, ts, text))

    def rated(self, run_id: str, verdict: str) -> None:
        """A rating counted in the metrics; the run's line gets its ratings (good/bad counts), edited in place. Each
        apart, as when the run ended."""
        self._apart("rating not counted", lambda: self._count_rating(run_id, verdict))
        self._apart("runs channel line not rated", lambda: self._rate_line(run_id))

    def _count_rating(self, run_id: str, verdict: str) -> None:
        event = self.runs.load_event(run_id) if self.metrics is not None else None
        if self.metrics is not None and event is not None:
            self.metrics.rated(str(event.workflow), verdict)

    def _rate_line(self, run_id: str) -> None:
        slack, where = self.replies().slack, self.runs.announced(run_id)
        if slack is None or where is None:
            return
        verdicts = [rating.verdict for rating in self.runs.feedback(run_id)]
        rated = f" · rated :+1: {verdicts.count('good')} :-1: {verdicts.count('bad')}"
        with suppress(ReplyError):  # cosmetic: the rating is stored with the run either way
            slack.update(where.channel, where.ts, where.text + rated)

    def _private(self, event: TriggerEvent) -> bool:
        return self.sources.of(event).private(event, Surfaces(self.replies(), self.runs))


def line(event: TriggerEvent, run: StoredRun, link: str | None, private: bool, sources: Sources = BUILTIN) -> str:
    """``:white_check_mark: *workflow* · slack mention in <#C…> · completed · $0.0123 · 8.2 s · <link|run page>``."""
    where = "a private conversation" if private else sources.of(event).described(event)
    took = "-" if run.duration_s is None else f"{run.duration_s:,.1f} s"
    parts = [
        f"{MARKS.get(run.status, ':grey_question:')} *{safe(run.workflow)}*",
        where,
        run.status,
        "-" if run.cost_usd is None else f"${run.cost_usd:.4f}",
        took,
    ]
    if link:
        parts.append(f"<{link}|run page>")
    return " · ".join(parts)
