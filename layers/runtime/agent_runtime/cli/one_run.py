"""The body of ``agent-runtime run``: load the workflow, open the model and the sandbox, run, print, keep.

Apart from the parser (``run.py``) so that ``--help`` and the other commands do not load the runtime.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from dataclasses import replace
from pathlib import Path

from .. import telemetry
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..hooks import Hook
from ..models.prices import unpriced_warning
from ..record import RunRecord, new_run_id
from ..runtime import Services, answer_footer, build_agent, deployed, open_model, workflow_sandbox
from ..skills import SkillLibrary
from ..stores import LocalStore, RunStore, StoreError, StoreFileStore, ThreadStore, VersionConflictError
from ..stores.hook import new_turn, unfinished
from ..stores.ids import check_thread_id
from ..stores.runs import run_partition, thread_partition
from ..trace import TraceHook
from ..workflows import Workflow, load_workflow
from .common import (
    EXIT_CODES,
    approver,
    load_files,
    message_text,
    print_outcome,
    program,
    save_outputs,
    store_location,
)
from .oauth import ActingForYou, terminal_connections
from .running import EXIT_INTERRUPTED, CtrlC, Started, login, stop_check


def run_workflow(args: argparse.Namespace, config: RuntimeConfig) -> int:
    args.message = message_text(args.message)
    if not args.message.strip():
        raise ConfigError("--message is empty: say what the workflow should do")
    skills = SkillLibrary(config.skills_dir)
    workflow = _workflow(args, config, skills)
    store = LocalStore(config.state_dir)
    threads, runs = ThreadStore(store), RunStore(store)
    state, version = threads.load(check_thread_id(args.thread)) if args.thread else (None, None)
    if args.thread and state is None:
        _a_run_as_thread(runs, args.thread)
    run_id = new_run_id()
    if args.thread:  # a turn killed mid-run is not lost: the thread goes on from its last checkpoint
        state = unfinished(threads, runs, args.thread) or state
        threads.mark_active(args.thread, run_id)
    # A thread keeps its files (attachments, virtual files, archives) with it, so ids in its history resolve.
    files = load_files(
        args.files, StoreFileStore(store, thread_partition(args.thread) if args.thread else run_partition(run_id))
    )
    before = {meta.id for meta in files.list()}
    # The trace's last line leaves out why the run stopped: print_outcome says it, once.
    trace = TraceHook(sys.stderr, show_payloads=config.log_payloads, reason=False)
    hooks: list[Hook] = [Started(runs, args.thread), ActingForYou(), *([] if args.quiet else [trace])]
    ctrl_c = CtrlC(stop_check(runs, run_id), login())  # Ctrl-C is a stop, as `runs stop` from elsewhere
    with open_model(workflow, config) as model, workflow_sandbox(workflow, config, notice=sys.stderr) as sandbox:
        services = Services(
            skills=skills,
            config=config,
            runs=runs,
            sandbox=sandbox,
            approver=approver(args.approve),
            thread_id=args.thread,
            identity=terminal_connections(workflow, config),  # tools acting as you: asked here to connect
        )
        agent = build_agent(workflow, model, services, files=files, hooks=hooks)
        with ctrl_c:
            record = agent.run(args.message, state=new_turn(state, run_id), run_id=run_id, stop=ctrl_c.check)
    telemetry.flush()
    footer = answer_footer(workflow, config.workflows_url, config.workflows_dir) if args.footer else None
    interrupted = ctrl_c.stopped_it(record)  # its line on stderr was said when Ctrl-C was pressed
    print_outcome(record, as_json=args.json, footer=footer, told=interrupted)  # shown even if the thread cannot keep it
    _kept(args, config, record, threads, version)
    if args.out_dir:
        save_outputs(files, before, Path(args.out_dir))
    return EXIT_INTERRUPTED if interrupted else EXIT_CODES.get(record.status, 1)


def _workflow(args: argparse.Namespace, config: RuntimeConfig, skills: SkillLibrary) -> Workflow:
    """The workflow named, as deployed, with --max-cost applied; a model without prices is said (unless --quiet)."""
    workflow = deployed(load_workflow(args.workflow, config.workflows_dir, skill_names=skills.names()), config)
    if args.max_cost is not None:
        if not (math.isfinite(args.max_cost) and args.max_cost > 0):
            raise ConfigError(f"--max-cost is a positive number of dollars, got {args.max_cost}")
        workflow = replace(workflow, limits=replace(workflow.limits, max_cost=args.max_cost))
    warning = unpriced_warning(workflow.model.name, workflow.model.prices)
    if warning and not args.quiet:
        print(f"agent-runtime: warning: {warning}", file=sys.stderr)
    return workflow


def _a_run_as_thread(runs: RunStore, thread: str) -> None:
    """``-t run-…`` with no such thread: a run id given where its thread's was meant (a run's id is what it prints
    last). Said, as the turn starts a new thread under that name."""
    row = runs.summary(thread)
    if row is None:
        return
    where = f"its thread is {row.thread_id!r}: -t {row.thread_id}" if row.thread_id else "it ran in no thread"
    print(f"agent-runtime: note: {thread} is a run, not a thread ({where}); this starts a new thread", file=sys.stderr)


def _kept(
    args: argparse.Namespace, config: RuntimeConfig, record: RunRecord, threads: ThreadStore, version: int | None
) -> None:
    """The thread's state saved for its next turn (over the version it started from), and where the run is kept."""
    if args.thread and record.state is not None:
        try:
            threads.save(args.thread, record.state, expected_version=version)
        except VersionConflictError:
            raise StoreError(
                f"thread {args.thread!r} was updated by another run meanwhile; run again to continue from it"
            ) from None
        threads.mark_active(args.thread, None)
    if not args.quiet and not args.json:  # where the run is kept, and how to open it from any directory
        where, local = store_location(config), shlex.quote(str(config.state_dir.resolve()))
        show = f"{program()} runs show"
        show = f"AGENT_STATE_DIR={local} {show}" if "AGENT_STATE_DIR" in where else show
        print(f"stored in {where}: {show} {record.run_id}", file=sys.stderr)
