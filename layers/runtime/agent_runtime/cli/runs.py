"""``agent-runtime runs show|link|chart|list|stop``: stored run records."""

from __future__ import annotations

import argparse
import functools
import itertools
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import inert
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..ids import check_run_id
from ..record import RunStatus
from .common import Commands, check_workflow, login, runs_store, store_location
from .running import as_listed, close, gone, interrupted

if TYPE_CHECKING:
    from ..stores import RunStore
    from ..views.rows import RunRow
    from ..views.run import StoredRun


def add(commands: Commands) -> None:
    runs = commands.add_parser(
        "runs", help="inspect stored runs", description="Inspect runs stored in AGENT_STATE_DIR."
    )
    runs_commands = runs.add_subparsers(dest="runs_command", metavar="COMMAND", required=True)
    _add_show(runs_commands)
    _add_link(runs_commands)
    _add_chart(runs_commands)
    _add_list(runs_commands)
    _add_stats(runs_commands)
    _add_stop(runs_commands)


def _add_show(runs_commands: Commands) -> None:
    runs_show = runs_commands.add_parser(
        "show",
        help="what a stored run did, turn by turn (--json: its record)",
        description="What a stored run did, turn by turn: the model's words, each tool call with its arguments and "
        "a cut of its result, virtual files, masking, folding and compactions, approvals, helpers, the cost of "
        "each model call, the answer and its ratings. --json prints the run's record as JSON (as before).",
    )
    runs_show.add_argument("run_id", metavar="RUN_ID", help="the run id (printed in the trace and in --json)")
    shown = runs_show.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="the record as JSON instead of the transcript")
    shown.add_argument(
        "--html", action="store_true", help="its page: one self-contained HTML file (transcript, chart, files, costs)"
    )
    runs_show.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    runs_show.set_defaults(handler=_cmd_show)


def _add_link(runs_commands: Commands) -> None:
    runs_link = runs_commands.add_parser(
        "link",
        help="a signed link to a run's page on the stack (AGENT_API_URL, run_page_key)",
        description="Print a signed, expiring link to the run's page as the stack serves it (GET /runs/RUN_ID/page): "
        "the same link an answer's footer carries. Needs AGENT_API_URL and the run_page_key secret (RUN_PAGE_KEY "
        "locally); lasts AGENT_RUN_PAGE_DAYS days (default 7).",
    )
    runs_link.add_argument("run_id", metavar="RUN_ID", help="the run id (runs list shows them)")
    runs_link.add_argument("--private", action="store_true", help="mark the page private (as for a private channel)")
    runs_link.set_defaults(handler=_cmd_link)


def _add_chart(runs_commands: Commands) -> None:
    runs_chart = runs_commands.add_parser(
        "chart",
        help="draw how a run used its window (SVG, or PNG when FILE ends in .png)",
        description="Draw a stored run: tokens by part of the request per model call (stacked), the window and the "
        "compaction point, compactions and maskings, tool calls per turn. SVG; PNG when FILE ends in .png (needs "
        "rsvg-convert or ImageMagick on the PATH).",
    )
    runs_chart.add_argument("run_id", metavar="RUN_ID", help="the run id (runs list shows them)")
    runs_chart.add_argument("-o", "--output", required=True, metavar="FILE", help="where to write the chart")
    runs_chart.set_defaults(handler=_cmd_chart)


def _add_list(runs_commands: Commands) -> None:
    runs_list = runs_commands.add_parser(
        "list",
        help="list stored runs, newest first",
        description="List stored runs, newest first: id (eval-… for an eval case's), workflow, status, model calls, "
        "tokens, cost estimate (all the run caused: its calls, compaction summaries and helpers), the helpers' share "
        "of it, started (a resumed run's first start, as runs show; --json: first_started_at, and started_at its "
        "latest invocation's, which orders the list). A run at work says running (a CLI run from its start); one "
        "whose process is gone without ending it (killed, a second Ctrl-C) says interrupted. Reads the local "
        "store, or S3 + DynamoDB when "
        "AGENT_TABLE and AGENT_BUCKET are set.",
    )
    runs_list.add_argument("--thread", metavar="ID", help="only this thread's runs")
    runs_list.add_argument("--status", choices=[str(s) for s in RunStatus], help="only runs that ended so")
    runs_list.add_argument("--limit", type=int, default=20, metavar="N", help="at most N runs (default 20)")
    runs_list.add_argument("--json", action="store_true", help="one JSON array instead of a table")
    runs_list.set_defaults(handler=_cmd_list)


def _add_stats(runs_commands: Commands) -> None:
    runs_stats = runs_commands.add_parser(
        "stats",
        help="how the workflows are doing: runs, failures, cost, tokens, tools, approvals, ratings for a period",
        description="Add up the stored runs of a period, per workflow and trigger: runs, failures (a run that did "
        "not complete: failed, at a limit, suspended or waiting) and the runs a person stopped (`stopped`, counted "
        "apart: a stop is no failure), cost, tokens and the cached share, time to the first token and duration "
        "(medians), tool calls, approvals and their wait, ratings; then failures by reason, tool calls by tool and "
        "skill loads by skill — the figures the stack's metrics and dashboard carry. Reads every run of the period "
        "from the store `runs list` reads; a run killed mid-run counts as `runs list` shows it (interrupted, a "
        "failure of that reason, with what it did by its last step), one at work is left out until it ends, a run "
        "whose record cannot be read is skipped and counted, and so are "
        "eval cases' runs (tests, some failing on purpose: --evals counts them, as trigger eval).",
    )
    runs_stats.add_argument("--since", default="7d", metavar="WHEN", help="a span (7d, 24h, 30m, 2w) or a date")
    runs_stats.add_argument("--workflow", metavar="NAME", help="only this workflow's runs")
    runs_stats.add_argument("--limit", type=int, metavar="N", help="only the newest N runs of the period, said so")
    runs_stats.add_argument(
        "--by",
        choices=("person", "team", "workflow"),
        help="one row per requester (their runs add up to the total), access group (a run counts in each of its "
        "requester's groups) or workflow, instead of per workflow and trigger",
    )
    runs_stats.add_argument("--evals", action="store_true", help="count eval cases' runs too (as trigger eval)")
    runs_stats.add_argument("--json", action="store_true", help="the figures as JSON")
    runs_stats.set_defaults(handler=_cmd_stats)


def _add_stop(runs_commands: Commands) -> None:
    runs_stop = runs_commands.add_parser(
        "stop",
        help="ask a working run to stop at its next step",
        description="Ask a run to stop: it ends at its next step (a model call in flight is closed), keeps its "
        "state and says who stopped it (you: local:<login>, as a CLI run acts for you); its thread takes the next "
        "message. Works on the store `runs list` reads "
        "(S3 + DynamoDB when AGENT_TABLE and AGENT_BUCKET are set); a CLI run sees it within half a second "
        "(Ctrl-C in its terminal is the same stop). A CLI run whose process is gone (interrupted) is closed as "
        "stopped; one `agent-runtime serve` left interrupted ends, its thread told, when serve starts again (it "
        "resumes such runs); one waiting between invocations is woken where a queue is set (AGENT_QUEUE_URL); "
        "without one, nothing is listening until it is resumed, and the command says so. Exit 1 when the run has "
        "already ended.",
    )
    runs_stop.add_argument("run_id", metavar="RUN_ID", help="the run id (runs list shows them)")
    runs_stop.set_defaults(handler=_cmd_stop)


def no_run(runs: RunStore, run_id: str, config: RuntimeConfig) -> ConfigError:
    """No such run: said with the newest stored run ids it is closest to (a character dropped or swapped)."""
    close = close_runs(runs, run_id)
    meant = f"; did you mean {' or '.join(close)}?" if close else ""
    return ConfigError(f"no stored run {run_id!r} in {store_location(config)}{meant}")


def close_runs(runs: RunStore, run_id: str) -> list[str]:
    """The newest stored run ids ``run_id`` is likely a typo of (at most two)."""
    import difflib

    known = [row.run_id for row in runs.list_runs(limit=500)]
    return difflib.get_close_matches(run_id, known, n=2, cutoff=0.85)


def _cmd_show(args: argparse.Namespace, config: RuntimeConfig) -> int:
    check_run_id(args.run_id)
    runs = runs_store(config)
    record = runs.load_record(args.run_id)
    record = interrupted(runs, args.run_id, record) or record  # as `runs list` shows it
    if record is None and _status(runs, args.run_id) == RunStatus.RUNNING:
        raise ConfigError(
            f"run {args.run_id} is still running: its record is stored when it ends "
            f"(`runs stop {args.run_id}` stops it)"
        )
    if record is None:
        raise no_run(runs, args.run_id, config)
    redact = _redactor(config)  # every way out: the record, its page, its transcript
    row = runs.summary(args.run_id)
    thread = row.thread_id if row else None
    if args.json:  # as stored, whatever it holds, and the thread it was a turn of (for the next turn's -t)
        from ..redaction import redacted

        text = inert.json_text(redacted(record | ({"thread_id": thread} if thread else {}), redact))
    elif args.html:
        from ..pages import page_for

        text = page_for(runs, args.run_id, redact=redact, run=_read(args.run_id, record)) or ""
    else:
        from ..reading.show import transcript

        checkpoint = runs.load_checkpoint(args.run_id)
        history = checkpoint[0].messages if checkpoint else None
        earlier = _earlier(runs, args.run_id, thread) if thread else []
        text = transcript(_read(args.run_id, record), history, redact, thread=thread, earlier=earlier)
    if args.output:
        Path(args.output).write_text(text + "\n", encoding="utf-8")
        print(f"agent-runtime: wrote {args.output}", file=sys.stderr)
    else:
        print(text)
    return 0


def _earlier(runs: RunStore, run_id: str, thread: str) -> list[tuple[str, int]]:
    """The thread's other runs, each with the first turn its record numbers (where its part of a later turn's
    history begins: ``reading.show.parts``)."""
    from ..reading.show import first_turn

    found = []
    for row in itertools.islice(runs.rows(thread_id=thread), 200):  # a long thread's newest: enough to mark
        loaded = runs.load_run(row.run_id, feedback=False) if row.run_id != run_id else None
        if loaded is not None:
            found.append((row.run_id, first_turn(loaded)))
    return found


def _read(run_id: str, record: dict[str, Any]) -> StoredRun:
    """The stored record as a run; one that does not read as one is said, and where (``--json`` prints it)."""
    from ..views import Unreadable, read_run

    try:
        return read_run(record)
    except Unreadable as error:
        raise ConfigError(f"run {run_id}: {error}; `runs show {run_id} --json` prints it as stored") from None


def _status(runs: RunStore, run_id: str) -> str | None:
    row = runs.summary(run_id)
    return None if row is None else row.status


def _redactor(config: RuntimeConfig) -> Callable[[str], str]:
    """The secrets a page, a transcript or a printed record must never show: the integrations secret's and the
    workflows' declared ones."""
    from ..pages.route import declared_secrets
    from ..redaction import Redactor
    from ..triggers.config import TriggerConfig, all_workflows

    try:
        workflows = all_workflows(config)
    except ConfigError:
        workflows = []  # a broken workflow file: the integrations secret's keys are still redacted
    return Redactor(TriggerConfig.from_env().secret_values(declared_secrets(workflows)))


def _cmd_stats(args: argparse.Namespace, config: RuntimeConfig) -> int:
    from ..reading.stats import add_up, gather, since, table

    if args.limit is not None and args.limit < 1:
        raise ConfigError(f"--limit {args.limit}: give a number of runs, 1 or more")
    start = since(args.since, datetime.now(UTC))
    runs = runs_store(config)
    unended = functools.partial(interrupted, runs, earlier=None)  # a killed run counts as `runs list` shows it
    read = gather(runs, start, workflow=args.workflow, limit=args.limit, evals=args.evals, unended=unended)
    if args.workflow and not read.runs:
        check_workflow(args.workflow, config, strict=False)  # no runs of a typo: say it is one
    report = {
        "since": start.isoformat(timespec="seconds"),
        "store": store_location(config),
        **add_up(read.runs, args.by),
        "unreadable": read.unreadable,
        "limited_to": args.limit if read.limited else None,
        "evals_left_out": read.evals_left_out,
    }
    if args.json:
        print(inert.json_text(report))
        return 0
    print(f"{report['runs']} run(s) since {report['since']} in {report['store']}")
    for line in read.notes(args.limit):
        print(line)
    print(table(report) if read.runs else "(none)")
    return 0


def _cmd_link(args: argparse.Namespace, config: RuntimeConfig) -> int:
    import time

    from ..pages import KEY, PageLinks
    from ..triggers.config import TriggerConfig

    check_run_id(args.run_id)
    key = TriggerConfig.from_env().secret(KEY)
    if not (config.api_url and key):
        raise ConfigError("a page link needs AGENT_API_URL (the stack's ApiUrl output) and the run_page_key secret")
    if (runs := runs_store(config)).summary(args.run_id) is None:
        raise no_run(runs, args.run_id, config)
    print(PageLinks(config.api_url, key, config.run_page_days).url(args.run_id, time.time(), private=args.private))
    return 0


def _cmd_chart(args: argparse.Namespace, config: RuntimeConfig) -> int:
    check_run_id(args.run_id)
    from ..reading.chart import run_chart

    record = (runs := runs_store(config)).load_record(args.run_id, feedback=False)
    if record is None:
        raise no_run(runs, args.run_id, config)
    try:
        svg = run_chart(_read(args.run_id, record))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    target = Path(args.output)
    if target.suffix.lower() == ".png":
        _write_png(svg, target)
    else:
        target.write_text(svg, encoding="utf-8")
    print(f"agent-runtime: wrote {target}", file=sys.stderr)
    return 0


def _write_png(svg: str, target: Path) -> None:
    tool = shutil.which("rsvg-convert") or shutil.which("magick") or shutil.which("convert")
    if tool is None:
        raise ConfigError("a PNG needs rsvg-convert or ImageMagick on the PATH; write an .svg instead")
    with tempfile.NamedTemporaryFile("w", suffix=".svg", delete=False, encoding="utf-8") as handle:
        handle.write(svg)
    command = (
        [tool, handle.name, "-o", str(target)] if tool.endswith("rsvg-convert") else [tool, handle.name, str(target)]
    )
    try:
        subprocess.run(command, check=True, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        raise ConfigError(f"{Path(tool).name} did not convert the chart within 60 s; write an .svg instead") from None
    except subprocess.CalledProcessError as error:  # the converter's own words: what it lacks, what to install
        said = " / ".join((error.stderr or error.stdout or b"").decode("utf-8", "replace").strip().splitlines()[-3:])
        raise ConfigError(
            f"{tool} could not convert the chart (exit {error.returncode}): {said or '-'}; "
            "install rsvg-convert (librsvg2-bin) or ImageMagick, or write an .svg"
        ) from None
    finally:
        Path(handle.name).unlink(missing_ok=True)


def _cmd_list(args: argparse.Namespace, config: RuntimeConfig) -> int:
    runs = runs_store(config)
    found = runs.list_runs(limit=max(1, args.limit), thread_id=args.thread, status=args.status)
    rows = [as_listed(runs, row) for row in found]  # one whose process is gone: interrupted, with what it spent
    listed = [(row, *_listed(runs, row)) for row in rows]
    if args.json:
        print(
            inert.json_text(
                [
                    row.to_dict() | {"status": status, "feedback": {"good": good, "bad": bad}}
                    for row, status, good, bad in listed
                ]
            )
        )
        return 0
    print(f"store: {store_location(config)}" + ("" if rows else " (no runs here)"), file=sys.stderr)
    print(
        f"{'run':<30} {'workflow':<20} {'status':<17} {'calls':>5} {'tokens':>9} {'cost':>8} {'helpers':>8} "
        f"{'rated':>6}  {'started':<19}  thread"
    )
    for row, status, good, bad in listed:  # cost: everything the run caused; helpers: its sub-agents' share of it
        cost = "-" if row.cost_usd is None else f"${row.cost_usd:.4f}"
        shared = f"${row.helpers_cost:.4f}" if row.helpers_cost else "-"
        rated = f"+{good}/-{bad}" if good or bad else "-"
        started = inert.terminal(row.first_start[:19].replace("T", " "))  # as runs show: the first
        thread = inert.terminal((row.thread_id or "-")[:60])  # what `run -t` takes to go on with it
        run_id, workflow, status = (
            inert.terminal(text[:cut]) for text, cut in zip((row.run_id, row.workflow, status), LIST_CUTS, strict=True)
        )
        print(
            f"{run_id:<30} {workflow:<20} {status:<17} {row.model_calls:>5} "
            f"{row.tokens:>9,} {cost:>8} {shared:>8} {rated:>6}  {started:<19}  {thread}"
        )
    return 0


def _listed(runs: RunStore, row: RunRow) -> tuple[str, int, int]:
    """A row's status as listed and what people said of its answer (Slack's feedback buttons): good, bad."""
    verdicts = [rating.verdict for rating in runs.feedback(row.run_id)]
    return row.status, verdicts.count("good"), verdicts.count("bad")


LIST_CUTS = (200, 20, 40)  # a row's run id, workflow and status: cut before they are made inert
ENDED = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.TOOL_CALL_LIMIT, RunStatus.COST_LIMIT, RunStatus.STOPPED}


def _cmd_stop(args: argparse.Namespace, config: RuntimeConfig) -> int:
    import time

    from ..stopping import StopRequest

    check_run_id(args.run_id)
    runs = runs_store(config)
    summary = runs.summary(args.run_id)
    if summary is None and runs.load_checkpoint(args.run_id) is None:
        raise no_run(runs, args.run_id, config)
    if summary is not None and summary.status in ENDED:
        print(f"run {args.run_id} has ended ({inert.terminal(summary.status)}): nothing to stop", file=sys.stderr)
        return 1
    process = gone(summary) if summary is not None else None
    if summary is not None and process is not None and runs.load_event(args.run_id) is None:  # a CLI run's
        close(runs, summary, process, login())
        print(f"run {args.run_id} was not running: its process (pid {process.pid}) is gone; closed it as stopped")
        return 0
    request = StopRequest(login(), time.time(), "cli")
    if not runs.request_stop(args.run_id, request):
        print(f"run {args.run_id} was already asked to stop")
        return 0
    print(f"asked run {args.run_id} to stop: {_when(runs, args.run_id, summary)}")
    return 0


def _when(runs: RunStore, run_id: str, summary: RunRow | None) -> str:
    """When the asked run ends: at its next step if something works on it; a run waiting for an approval or
    between invocations when it is woken (a queue) or resumed; nothing is listening otherwise."""
    if summary is not None and gone(summary) is not None:  # a worker's (serve's): its thread is told when it ends
        return "its worker's process is gone: it ends, and its thread says so, when `agent-runtime serve` starts again"
    if summary is None or summary.status == RunStatus.RUNNING:
        return "it ends at its next step"
    if _wake(runs, run_id):
        return "it was woken to end now"
    return f"nothing is listening ({summary.status}): it ends when it is resumed"


def _wake(runs: RunStore, run_id: str) -> bool:
    """A run between invocations is ended by a continuation, where a queue is configured (AGENT_QUEUE_URL): the
    worker's path for a Stop click."""
    from ..triggers.config import TriggerConfig

    event, url = runs.load_event(run_id), TriggerConfig.from_env().queue_url
    if event is None or not url:
        return False
    import boto3

    from ..service.stops import wake_to_end
    from ..triggers.queue import SqsQueue

    wake_to_end(SqsQueue(boto3.client("sqs"), url), run_id, event.thread_id)
    return True
