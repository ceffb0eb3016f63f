"""An answer as a thread gets it: the run's text (or an apology), its notes — the tool-call cap, the spend limit
and what the run cost, a cut-off — the footer citing the workflow, the files the turn's Python wrote (and the
chart), posted once per run however often the queue delivers it; and the ratings people give it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from aws_lambda_powertools import Logger

from .. import telemetry
from ..chat.channels import Channel
from ..chat.exceptions import ReplyError
from ..config import RuntimeConfig
from ..record import RunRecord, RunStatus
from ..sandbox.outputs import written_since
from ..spend import describe
from ..stores import RunStore, StoreFileStore
from ..stores.items import ThreadBase
from ..triggers.queued import FeedbackMessage
from ..workflows import Workflow
from .outcome import Outcome

REPLY_FILES = 5  # files the turn's Python wrote, attached to the answer (within max_attachment_bytes in all)
APOLOGY = "Sorry — I could not finish this one. If you report it, quote run `{run_id}`."
CUT_NOTE = "_This answer was cut off at the model's output limit._"
CAP_NOTE = "_Stopped at the workflow's limit of tool calls: this answer may be incomplete._"
COST_LIMIT_NOTE = "_{why} This run cost {cost}. The thread keeps its work._"
STOPPED_NOTE = ":octagonal_sign: {why} The thread keeps its work: send a message here to go on."  # why: who
ANSWERED = (RunStatus.COMPLETED, RunStatus.TOOL_CALL_LIMIT, RunStatus.COST_LIMIT)


@dataclass(frozen=True, slots=True)
class Answer:
    text: str
    files: list[tuple[str, bytes]]
    answered: bool  # the run's own answer (rated, with its files), or an apology


class Answers:
    """Composes and posts answers for one worker."""

    def __init__(
        self,
        config: RuntimeConfig,
        runs: RunStore,
        log: Logger,
        max_attachment_bytes: int,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config, self.runs, self.log, self.max_attachment_bytes = config, runs, log, max_attachment_bytes
        self.clock = clock  # ratings are stamped by it

    def compose(
        self,
        record: RunRecord,
        workflow: Workflow | None,
        base: ThreadBase | None,
        files: StoreFileStore,
        page: str | None = None,
        said: str = "",
    ) -> Answer:
        """``page``: the signed link to the run's page, beside the prompt's in the footer. ``workflow``: None for a
        run whose file could not be read (no answer, no footer); ``said``: a line under an apology."""
        answered = workflow is not None and bool(record.final_answer) and record.status in ANSWERED
        if workflow is not None and answered:
            text = self.with_footer(record.final_answer or "", workflow, page) + _note(record, workflow)
        elif record.status is RunStatus.COST_LIMIT:  # no last answer fitted: why it stopped is the reply
            text = _cost_note(record)
        elif record.status is RunStatus.STOPPED:  # who stopped it, where all can see
            text = STOPPED_NOTE.format(why=record.stop_reason or "Stopped.")
        else:
            text = APOLOGY.format(run_id=record.run_id) + (f"\n{said}" if said else "")
        if page and not answered:  # what happened, for whoever looks into it
            text += f"\n\n_<{page}|What the run did>_"
        outputs, left_out = self._outputs(base, files) if answered else ([], [])
        if workflow is not None and answered and workflow.report.chart:  # its window's use, beside its answer
            outputs += self._chart(record)
        if left_out:
            text += f"\n\n_Not attached (at most {REPLY_FILES} files, {self.max_attachment_bytes // 2**20} MB): "
            text += ", ".join(left_out) + "_"
        return Answer(text, outputs, answered)

    def with_footer(self, answer: str, workflow: Workflow, page: str | None = None) -> str:
        from ..runtime import answer_footer  # loaded by the run this answers

        footer = answer_footer(workflow, self.config.workflows_url, self.config.workflows_dir, chat=True)
        link = footer.split("<", 1)[1].split("|", 1)[0] if "<" in footer else None
        shown = f"{footer[:-1]} · <{page}|what it did>_" if page else footer  # the footer is _italic_
        if link and link in answer:  # the model cited the prompt: the page's link alone
            return f"{answer}\n\n_<{page}|What the run did>_" if page else answer
        return f"{answer}\n\n{shown}"

    def post(self, channel: Channel, run_id: str, answer: Answer) -> None:
        """Once per run: a redelivered message that finds the reply claimed posts nothing (but ``post_again``)."""
        if not self.runs.claim_reply(run_id, answer.text, rated=answer.answered):
            self.log.warning("reply already being posted by another delivery")
            return
        channel.answer(answer.text, feedback=answer.answered)  # an answer can be rated; an apology cannot
        attached = self._attach(channel, answer.files) if answer.files else 0
        self.runs.mark_replied(run_id, chars=len(answer.text), files=attached)

    def post_again(self, channel: Channel, run_id: str) -> bool:
        """The answer an invocation was posting when it was cut off (its claim keeps the text), finished by a later
        one: the channel ends what was left (a stream left open, the working message) and posts what was not out
        yet. Its files are not attached again (which ones went is unknown). False: nothing was left to post."""
        claim = self.runs.reply_claim(run_id)
        if claim is None or claim.state != "posting" or not claim.text:
            return False
        self.log.info("finishing the answer of an invocation cut off while it posted")
        channel.answer(claim.text, feedback=claim.rated)
        self.runs.mark_replied(run_id, chars=len(claim.text), files=0)
        return True

    def rate(self, message: FeedbackMessage, then: Callable[[str, str], None] | None = None) -> Outcome:
        """Stored with the run (shown by runs show/list), and a span event when tracing is on; ``then(run_id,
        verdict)`` when it changed something (the runs channel's line, the metrics)."""
        changed = self.runs.save_feedback(message.run_id, message.user, message.verdict, self.clock(), message.name)
        if changed and then is not None:
            then(message.run_id, message.verdict)
        attributes: dict[str, str | int | bool] = {
            "agent_runtime.run_id": message.run_id,
            "agent_runtime.verdict": message.verdict,
            "agent_runtime.changed": changed,
        }
        with telemetry.span("feedback", attributes):
            pass
        self.log.info("feedback", extra={"verdict": message.verdict, "changed": changed})
        return Outcome.RATED

    def _outputs(self, base: ThreadBase | None, files: StoreFileStore) -> tuple[list[tuple[str, bytes]], list[str]]:
        """The files this turn's Python wrote, to attach to the answer, and the names of those left out."""
        if base is None or base.files is None:
            return [], []  # a run from before files were recorded: which files are new is unknown
        attached: list[tuple[str, bytes]] = []
        left_out: list[str] = []
        total = 0
        for meta in written_since(files, set(base.files)):
            if len(attached) < REPLY_FILES and total + meta.size_bytes <= self.max_attachment_bytes:
                attached.append((meta.name, files.read(meta.id)))
                total += meta.size_bytes
            else:
                left_out.append(meta.name)
        return attached, left_out

    def _chart(self, record: RunRecord) -> list[tuple[str, bytes]]:
        """The whole run's chart (every invocation: one resumed after an approval draws both), as stored."""
        from ..reading.chart import run_chart
        from ..views.run import whole_run

        def unread(error: Exception) -> None:
            self.log.warning("run record not read for its chart", extra={"error": type(error).__name__})

        try:
            return [(f"{record.run_id}-chart.svg", run_chart(whole_run(self.runs, record, unread)).encode("utf-8"))]
        except ValueError:  # no model call to draw (an answer replayed from a checkpoint)
            return []

    def _attach(self, channel: Channel, outputs: list[tuple[str, bytes]]) -> int:
        """Uploads after the answer; a refused upload is said in the thread, and the answer stands."""
        try:
            return channel.attach(outputs)
        except ReplyError as error:
            self.log.warning("files not attached", extra={"reason": str(error)})
            channel.note(f"(The files could not be attached: {error})")
            return 0


def _note(record: RunRecord, workflow: Workflow) -> str:
    """Why an answer may be incomplete: the tool-call cap, the spend limit, or the output limit."""
    if record.status is RunStatus.TOOL_CALL_LIMIT:
        return f"\n\n{CAP_NOTE}"
    if record.status is RunStatus.COST_LIMIT:
        return f"\n\n{_cost_note(record)}"
    return f"\n\n{CUT_NOTE}" if record.stop_reason else ""  # completed, but cut off at the output limit


def _cost_note(record: RunRecord) -> str:
    """The spend limit's reason (which limit, what is left, how to go on: "continue with $N more" only where an
    approver may grant it, service.grants.go_on) and what the run cost (helpers and compaction included)."""
    return COST_LIMIT_NOTE.format(why=record.stop_reason or "", cost=describe(record.ledger.breakdown()))
