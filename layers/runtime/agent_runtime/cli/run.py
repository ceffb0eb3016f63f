"""``agent-runtime run WORKFLOW --message …``: one run on the local store, the answer on stdout."""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

from .. import telemetry
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..hooks import Hook
from ..models.prices import unpriced_warning
from ..record import new_run_id
from ..runtime import Services, answer_footer, build_agent, deployed, open_model, workflow_sandbox
from ..skills import SkillLibrary
from ..stores import LocalStore, RunStore, StoreError, StoreFileStore, ThreadStore, VersionConflictError
from ..stores.hook import new_turn
from ..stores.runs import check_thread_id, run_partition, thread_partition
from ..trace import TraceHook
from ..workflows import load_workflow
from .common import (
    EXIT_CODES,
    Commands,
    approver,
    exit_codes_line,
    load_files,
    message_text,
    print_outcome,
    program,
    save_outputs,
    store_location,
)
from .running import EXIT_INTERRUPTED, CtrlC, Started, login, stop_check

RUN_EPILOG = """\
examples:
  agent-runtime run document-feedback --message "Review this" --file spec.md --file old-spec.md
  agent-runtime run ./my-workflow.yaml --message "hello" --json
  agent-runtime run document-feedback --thread PROJ-123 --message "and now?"
  agent-runtime run document-feedback --message "chart the latencies" --file log.txt --out-dir out/

""" + textwrap.fill(exit_codes_line() + " (all of them: docs/cli.md)", 110)


def add(commands: Commands) -> None:
    run = commands.add_parser(
        "run",
        help="run a workflow on a message and print the final answer",
        description="Run a workflow on a message and print the final answer on stdout. "
        "A live trace (turns, tokens used/available, tool calls) goes to stderr.",
        epilog=RUN_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("workflow", metavar="WORKFLOW", help="a workflow name in the workflows folder, or a YAML path")
    run.add_argument(
        "-m",
        "--message",
        required=True,
        help="the user's message; '-' reads it from stdin, '@FILE' from a file (a pasted log can be longer than a "
        "command line may hold)",
    )
    run.add_argument(
        "-f", "--file", dest="files", action="append", default=[], metavar="PATH", help="attach a file (repeatable)"
    )
    run.add_argument(
        "-t", "--thread", metavar="ID", help="continue (or start) a conversation thread stored under AGENT_STATE_DIR"
    )
    run.add_argument("--json", action="store_true", help="print the run record as JSON instead of the answer")
    run.add_argument("--out-dir", metavar="DIR", help="save the files the run's Python wrote here")
    run.add_argument("-q", "--quiet", action="store_true", help="no live trace on stderr")
    run.add_argument(
        "--footer",
        action="store_true",
        help="end the answer with the line a Slack or JIRA reply ends with, citing the workflow "
        "(a link with AGENT_WORKFLOWS_URL, else the workflow file)",
    )
    run.add_argument(
        "--approve",
        choices=("all", "none"),
        help="calls that need approval (the workflow's tools.approval): run them all, or deny them all; "
        "default: ask y/n in a terminal, deny when not interactive",
    )
    run.add_argument(
        "--max-cost",
        type=float,
        metavar="DOLLARS",
        help="this run's spend limit instead of the workflow's limits.max_cost (to go on with a thread that "
        "stopped at its limit: --thread ID --message 'go on' --max-cost 2)",
    )
    run.set_defaults(handler=_cmd_run)


def _cmd_run(args: argparse.Namespace, config: RuntimeConfig) -> int:
    args.message = message_text(args.message)
    if not args.message.strip():
        raise ConfigError("--message is empty: say what the workflow should do")
    skills = SkillLibrary(config.skills_dir)
    workflow = deployed(load_workflow(args.workflow, config.workflows_dir, skill_names=skills.names()), config)
    if args.max_cost is not None:
        if not (math.isfinite(args.max_cost) and args.max_cost > 0):
            raise ConfigError(f"--max-cost is a positive number of dollars, got {args.max_cost}")
        workflow = replace(workflow, limits=replace(workflow.limits, max_cost=args.max_cost))
    warning = unpriced_warning(workflow.model.name, workflow.model.prices)
    if warning and not args.quiet:
        print(f"agent-runtime: warning: {warning}", file=sys.stderr)
    store = LocalStore(config.state_dir)
    threads, runs = ThreadStore(store), RunStore(store)
    state, version = threads.load(check_thread_id(args.thread)) if args.thread else (None, None)
    run_id = new_run_id()
    if args.thread:  # a turn killed mid-run is not lost: the thread goes on from its last checkpoint
        state = threads.unfinished(args.thread, runs) or state
        threads.mark_active(args.thread, run_id)
    # A thread keeps its files (attachments, virtual files, archives) with it, so ids in its history resolve.
    files = load_files(
        args.files, StoreFileStore(store, thread_partition(args.thread) if args.thread else run_partition(run_id))
    )
    before = {meta.id for meta in files.list()}
    # The trace's last line leaves out why the run stopped: print_outcome says it, once.
    trace = TraceHook(sys.stderr, show_payloads=config.log_payloads, reason=False)
    hooks: list[Hook] = [Started(runs, args.thread), *([] if args.quiet else [trace])]
    ctrl_c = CtrlC(stop_check(runs, run_id), login())  # Ctrl-C is a stop, as `runs stop` from elsewhere
    with open_model(workflow, config) as model, workflow_sandbox(workflow, config, notice=sys.stderr) as sandbox:
        services = Services(skills=skills, config=config, runs=runs, sandbox=sandbox, approver=approver(args.approve),
                            thread_id=args.thread)  # fmt: skip
        agent = build_agent(workflow, model, services, files=files, hooks=hooks)
        with ctrl_c:
            record = agent.run(args.message, state=new_turn(state, run_id), run_id=run_id, stop=ctrl_c.check)
    telemetry.flush()
    footer = answer_footer(workflow, config.workflows_url, config.workflows_dir) if args.footer else None
    interrupted = ctrl_c.stopped_it(record)  # its line on stderr was said when Ctrl-C was pressed
    print_outcome(record, as_json=args.json, footer=footer, told=interrupted)  # shown even if the thread cannot keep it
    if args.thread and record.state is not None:
        try:
            threads.save(args.thread, record.state, expected_version=version)
        except VersionConflictError:
            raise StoreError(
                f"thread {args.thread!r} was updated by another run meanwhile; run again to continue from it"
            ) from None
        threads.mark_active(args.thread, None)
    if args.out_dir:
        save_outputs(files, before, Path(args.out_dir))
    if not args.quiet and not args.json:  # where the run is kept, and how to open it from any directory
        where, local = store_location(config), shlex.quote(str(config.state_dir.resolve()))
        show = f"{program()} runs show"
        show = f"AGENT_STATE_DIR={local} {show}" if "AGENT_STATE_DIR" in where else show
        print(f"stored in {where}: {show} {record.run_id}", file=sys.stderr)
    return EXIT_INTERRUPTED if interrupted else EXIT_CODES.get(record.status, 1)
