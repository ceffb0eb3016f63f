"""The body of ``agent-runtime run``: load the workflow, open the model and the sandbox, run, print, keep.

Apart from the parser (``run.py``) so that ``--help`` and the other commands do not load the runtime.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TextIO

from .. import telemetry
from ..config import RuntimeConfig
from ..errors import ConfigError
from ..hooks import Hook
from ..ids import RUN_ID_SHAPE, check_thread_id
from ..models.prices import unpriced_warning
from ..record import RunRecord, RunStatus, new_run_id
from ..runtime import Services, answer_footer, build_agent, deployed, open_model, workflow_sandbox
from ..skills import SkillLibrary
from ..spend import cli_go_on
from ..stores import LocalStore, RunStore, StoreFileStore, ThreadStore, VersionConflictError
from ..stores.exceptions import InvalidStateError
from ..stores.hook import KeptAtStart, new_turn, unfinished
from ..stores.runs import thread_partition
from ..trace import TraceHook
from ..workflows import Workflow, load_workflow
from ..workflows.schema import unpriced_limit
from .common import (
    EXIT_CODES,
    approver,
    load_files,
    login,
    message_text,
    print_outcome,
    program,
    save_outputs,
    store_location,
)
from .oauth import ActingForYou, terminal_connections
from .running import EXIT_INTERRUPTED, CtrlC, Started, stop_check
from .runs import close_runs


def run_workflow(args: argparse.Namespace, config: RuntimeConfig) -> int:
    args.message = message_text(args.message)
    if not args.message.strip():
        raise ConfigError("--message is empty: say what the workflow should do")
    if args.thread is not None:  # before the demo model's note: a refused id is one line (-t '' too: no id)
        check_thread_id(args.thread)
    skills = SkillLibrary(config.skills_dir)
    workflow = _workflow(args, config, skills)
    store = LocalStore(config.usable_state_dir(create=True))
    run_id = new_run_id()
    # A run without -t is the first turn of a thread of its own, named by its run id: `run -t RUN_ID` goes on
    # from it, as from any thread (its answer, `runs show` and `runs list` name the thread).
    thread = args.thread if args.thread is not None else run_id
    if args.thread is not None:
        _no_typo(ThreadStore(store), RunStore(store), thread, config)
    # A thread's turns one at a time, as a deployed thread's (its messages are one SQS FIFO group): a second turn
    # waits for the first to end and goes on from it, so no turn is lost to the other's save.
    waiting = partial(_waiting, ThreadStore(store), thread)
    with store.one_at_a_time(thread_partition(thread), waiting):
        return _turn(args, config, workflow, skills, store, (run_id, thread))


def _notes(args: argparse.Namespace) -> TextIO | None:
    """Where a run's warnings go: stderr, or nowhere with --quiet (see its help: what stays is what changes the
    answer, such as the embedded demo model's one line: its answers are canned)."""
    return None if args.quiet else sys.stderr


def _waiting(threads: ThreadStore, thread: str) -> None:
    run = threads.active(thread)
    under_way = f"a turn under way ({run})" if run else "a turn under way"
    print(
        f"agent-runtime: thread {thread!r} has {under_way}: this turn starts when it ends (Ctrl-C gives up)",
        file=sys.stderr,
        flush=True,
    )


def _turn(
    args: argparse.Namespace,
    config: RuntimeConfig,
    workflow: Workflow,
    skills: SkillLibrary,
    store: LocalStore,
    ids: tuple[str, str],
) -> int:
    """One run (``ids``: its id and its thread's) on the thread's newest state when it has one (its turn taken:
    ``run_workflow``)."""
    (run_id, thread), threads, runs = ids, ThreadStore(store), RunStore(store)
    state, version = threads.load(thread)
    if args.thread and state is None and not args.quiet:
        _a_run_as_thread(runs, args.thread)
    state = unfinished(threads, runs, thread) or state  # a turn killed mid-run is not lost: from its last checkpoint
    threads.mark_active(thread, run_id)
    # A thread keeps its files (attachments, virtual files, archives) with it, so ids in its history resolve.
    files = load_files(args.files, StoreFileStore(store, thread_partition(thread)))
    before = {meta.id for meta in files.list()}
    # The trace's last line leaves out why the run stopped: print_outcome says it, once.
    trace = TraceHook(sys.stderr, show_payloads=config.log_payloads, reason=False)
    # KeptAtStart: a turn killed in its first model call keeps the person's message for the thread's next turn
    hooks: list[Hook] = [Started(runs, thread), KeptAtStart(runs), ActingForYou(), *([] if args.quiet else [trace])]
    ctrl_c = CtrlC(stop_check(runs, run_id), login())  # Ctrl-C is a stop, as `runs stop` from elsewhere
    with open_model(workflow, config) as model, workflow_sandbox(workflow, config, notice=_notes(args)) as sandbox:
        services = Services(
            skills=skills,
            config=config,
            runs=runs,
            sandbox=sandbox,
            approver=approver(args.approve),
            thread_id=thread,
            go_on=cli_go_on(f"{program()} run {shlex.quote(args.workflow)}", thread),
            identity=terminal_connections(workflow, config),  # tools acting as you: asked here to connect
        )
        agent = build_agent(workflow, model, services, files=files, hooks=hooks)
        with ctrl_c:
            record = agent.run(args.message, state=new_turn(state, run_id), run_id=run_id, stop=ctrl_c.check)
    telemetry.flush()
    kept = _kept(thread, record, threads, runs, version)  # before the answer: a turn the thread lost is a failed run
    footer = answer_footer(workflow, config.workflows_url, config.workflows_dir) if args.footer else None
    interrupted = ctrl_c.stopped_it(record)  # its line on stderr was said when Ctrl-C was pressed
    print_outcome(record, as_json=args.json, footer=footer, told=interrupted, answer=kept, thread=thread)
    _stored_in(args, config, record, thread)
    if args.out_dir:
        save_outputs(files, before, Path(args.out_dir))
    return EXIT_INTERRUPTED if interrupted else EXIT_CODES.get(record.status, 1)


def _workflow(args: argparse.Namespace, config: RuntimeConfig, skills: SkillLibrary) -> Workflow:
    """The workflow named, as deployed, with --max-cost applied; a model without prices is said (unless --quiet),
    or refused when a limit in dollars needs its price (``workflows validate`` says the same)."""
    workflow = deployed(load_workflow(args.workflow, config.workflows_dir, skill_names=skills.names()), config)
    if args.max_cost is not None:
        if not (math.isfinite(args.max_cost) and args.max_cost > 0):
            raise ConfigError(f"--max-cost is a positive number of dollars, got {args.max_cost}")
        workflow = replace(workflow, limits=replace(workflow.limits, max_cost=args.max_cost))
    via = " (AGENT_MODEL)" if config.model_override and config.model_override == workflow.model.name else ""
    if (unpriced := unpriced_limit(workflow.model, workflow.limits, via=via)) is not None:
        key, why = unpriced  # refused before anything starts, and said once (no warning of what it refuses)
        given = " (--max-cost)" if args.max_cost is not None and key == "limits.max_cost" else ""
        raise ConfigError(f"{workflow.path}: {key}{given}: {why}")
    warning = unpriced_warning(workflow.model.name, workflow.model.prices)
    if warning and not args.quiet:
        print(f"agent-runtime: warning: {warning}", file=sys.stderr)
    return workflow


def _no_typo(threads: ThreadStore, runs: RunStore, thread: str, config: RuntimeConfig) -> None:
    """``-t`` shaped as a run id (``run-…``, ``eval-…``: copied from an answer) naming nothing stored, though a
    stored run is a character away: a typo, refused with the id meant (as ``runs show`` says), not a new thread
    under it. A thread name of one's own choosing starts a new thread, as ever."""
    if not RUN_ID_SHAPE.fullmatch(thread) or threads.load(thread)[0] is not None or runs.summary(thread):
        return
    if close := close_runs(runs, thread):
        where = store_location(config)
        raise ConfigError(f"--thread {thread}: no such thread or run in {where}; did you mean {' or '.join(close)}?")


def _a_run_as_thread(runs: RunStore, thread: str) -> None:
    """``-t run-…`` with no such thread: a run id given where its thread's was meant (a run's id is what it prints
    last). Said, as the turn starts a new thread under that name."""
    row = runs.summary(thread)
    if row is None:
        return
    where = f"its thread is {row.thread_id!r}: -t {row.thread_id}" if row.thread_id else "it ran in no thread"
    print(f"agent-runtime: note: {thread} is a run, not a thread ({where}); this starts a new thread", file=sys.stderr)


def _kept(thread: str, record: RunRecord, threads: ThreadStore, runs: RunStore, version: int | None) -> bool:
    """The thread's state saved for its next turn, over the version it started from. A thread saved meanwhile by
    a writer that did not wait its turn (serve, an eval on this store), or a state the thread would refuse, loses
    this turn: the run is then failed, its record saying so and keeping its answer (``runs show``), not printed
    as if the thread had it. False then."""
    if record.state is None:
        threads.mark_active(thread, None)
        return True
    try:
        threads.save(thread, record.state, expected_version=version)
    except (VersionConflictError, InvalidStateError) as error:
        why = (
            f"thread {thread!r} was updated by another writer meanwhile"
            if isinstance(error, VersionConflictError)
            else str(error)
        )
        record.status = RunStatus.FAILED
        kept = f"its answer is kept in its record: runs show {record.run_id}"
        record.stop_reason = f"this turn is not kept in its thread: {why}; {kept}"
        runs.save_record(record, thread_id=thread)
        return False
    finally:
        threads.mark_active(thread, None)
    return True


def _stored_in(args: argparse.Namespace, config: RuntimeConfig, record: RunRecord, thread: str) -> None:
    """Where the run is kept, how to open it from any directory, and how to take its thread's next turn."""
    if not args.quiet and not args.json:
        where, local = store_location(config), shlex.quote(str(config.state_dir.resolve()))
        show = f"{program()} runs show"
        show = f"AGENT_STATE_DIR={local} {show}" if "AGENT_STATE_DIR" in where else show
        print(f"stored in {where}: {show} {record.run_id}", file=sys.stderr)
        again = f"{program()} run {shlex.quote(args.workflow)} --thread {shlex.quote(thread)} --message ..."
        print(f"its thread is {thread}: go on with {again}", file=sys.stderr)
